package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/serve"
)

// stats are a row's numbers.
type stats struct {
	sent, in              int
	p50out, p99out        time.Duration
	p50in, p99in          time.Duration
	failures              int
	reasons               string // the commonest failures
	sick                  int    // requests the primary received while broken
	bound                 int    // the goal's bound on sick
	back                  time.Duration
	backOK                bool // all traffic on the primary again within the run
	failOK, p99OK, sickOK bool
	backGoal, met         bool
	p99Limit              time.Duration
	backupInOutage        int // requests issued in the outage and served by the backup
}

// measure computes a row's stats and checks them against the goals.
func measure(r row, o options) stats {
	var st stats
	var in, out []time.Duration
	why := map[string]int{}
	for _, rec := range r.recs {
		inOutage := rec.at >= r.sched.down && rec.at < r.sched.fix
		if inOutage {
			st.in++
		}
		if !rec.ok {
			st.failures++
			why[rec.why]++
		}
		if !rec.sent {
			continue
		}
		st.sent++
		if inOutage {
			in = append(in, rec.lat)
			if rec.ok && rec.served == "backup" {
				st.backupInOutage++
			}
		} else {
			out = append(out, rec.lat)
		}
	}
	st.p50out, st.p99out = serve.Quantile(out, 0.5), serve.Quantile(out, 0.99)
	st.p50in, st.p99in = serve.Quantile(in, 0.5), serve.Quantile(in, 0.99)
	st.reasons = reasons(why)
	st.sick, st.bound = sickPrimary(r, o)
	if b, ok := partialBound(r, st.in); ok {
		st.bound = b
	}
	st.back, st.backOK = backOnPrimary(r)

	st.failOK = st.failures == 0
	st.p99Limit = max(3*st.p99out, 250*time.Millisecond)
	if r.kind.slow {
		st.p99Limit = 1500 * time.Millisecond
	}
	st.p99OK = r.kind.noP99 || len(in) > 0 && st.p99in <= st.p99Limit
	st.sickOK = st.sick <= st.bound
	st.backGoal = !r.kind.back || (st.backOK && st.back <= cooldown+2*time.Second)
	st.met = st.failOK && st.p99OK && st.sickOK && st.backGoal
	return st
}

// reasons names the two commonest failures with their counts.
func reasons(why map[string]int) string {
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range why {
		all = append(all, kv{k, n})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || all[i].n == all[j].n && all[i].k < all[j].k })
	var parts []string
	for i, e := range all {
		if i == 2 {
			parts = append(parts, "...")
			break
		}
		parts = append(parts, fmt.Sprintf("%d %s", e.n, e.k))
	}
	return strings.Join(parts, ", ")
}

// sickPrimary counts the requests the primary received while broken, and
// the goal's bound: (trip threshold + the client requests in flight at the
// trip + the probes of each cooldown of the outage) x (max_retries + 1 for
// the fast kinds, whose retries stay; 1 for the slow ones). Issue 17 counts
// one probe per cooldown; that holds where a failed probe re-trips at once
// (a rate limit of any kind). A Transient probe failure (a 500, a timeout)
// re-trips only at the trip threshold's worth in a row (SEMANTICS §3,
// "Decision (transient probe failures)"), so those kinds get the threshold's
// worth of probes per cooldown. The trip is dated at the end of the
// threshold's worth of broken requests (threshold x that factor).
func sickPrimary(r row, o options) (sick, bound int) {
	var ends []time.Duration // of the broken requests that have ended
	for _, a := range r.primary {
		if a.broken && a.at >= r.sched.start {
			sick++
			if a.end > 0 {
				ends = append(ends, a.end)
			}
		}
	}
	m := 1
	if r.kind.fast {
		m = maxRetries + 1
	}
	inFlight := 0
	if k := tripThreshold * m; len(ends) >= k {
		slices.Sort(ends)
		trip := ends[k-1]
		for _, rec := range r.recs {
			if rec.sent && rec.at <= trip && rec.at+rec.lat > trip {
				inFlight++
			}
		}
	}
	probes := int((o.outage + cooldown - 1) / cooldown)
	if r.kind.transient {
		probes *= tripThreshold
	}
	return sick, (tripThreshold + inFlight + probes) * m
}

// backOnPrimary returns the time from the fix until every later request
// (by when it was due) is served by the primary; ok is false when that
// final run is shorter than 2 s (not back within the run).
func backOnPrimary(r row) (time.Duration, bool) {
	last := -1 // the last request after the fix not served by the primary
	for i, rec := range r.recs {
		if rec.at >= r.sched.fix && !(rec.ok && rec.served == "primary") {
			last = i
		}
	}
	first := last + 1
	for first < len(r.recs) && r.recs[first].at < r.sched.fix {
		first++
	}
	if first >= len(r.recs) || r.sched.end-r.recs[first].at < 2*time.Second {
		return r.sched.end - r.sched.fix, false
	}
	return r.recs[first].at - r.sched.fix, true
}

// printReport prints the outage table, the probe table and the summary.
func printReport(w io.Writer, o options, rep *report) {
	fmt.Fprintf(w, "\nOpen loop, %d req/s (one in four streaming), primary broken for %v after %v, then %v; backup healthy.\n", o.rate, o.outage, o.before, o.after)
	fmt.Fprintf(w, "loopctl: trip_threshold %d, recovery_timeout %v, max_retries %d, first_byte %v (hang, stall: hedge_after %v).\n", tripThreshold, cooldown, maxRetries, firstByte, hedgeAfter)
	if slices.ContainsFunc(rep.rows, func(r row) bool { return r.target == "portkey" }) {
		fmt.Fprintf(w, "Portkey: fallback primary -> backup, each with retry attempts %d (Portkey's backoff) and request_timeout %v.\n", maxRetries, firstByte)
	}
	fmt.Fprintf(w, "Client timeout %v (sent as X-Stainless-Timeout); latencies are until the whole answer, failures included.\n\n", o.clientTimeout)
	fmt.Fprintln(w, "| primary during the outage | gateway | p50 / p99 outside | p50 / p99 in the outage | client failures | requests to the sick primary (goal) | fix → all on primary | goals |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	met := map[string]int{}
	fails := map[string]int{}
	for _, r := range rep.rows {
		st := measure(r, o)
		if st.met {
			met[r.target]++
		}
		fails[r.target] += st.failures
		label := r.kind.label
		if r.note != "" {
			label += " †"
		}
		fmt.Fprintf(w, "| %s | %s | %s / %s | %s / %s | %s | %d (≤ %d) | %s | %s |\n", label, r.target,
			dur(st.p50out), dur(st.p99out), dur(st.p50in), dur(st.p99in), failText(st), st.sick, st.bound, backText(st), goalText(r, st))
	}
	printPartial(w, rep.rows, o.backoff)
	printNotes(w, rep.notes)
	printLate(w, rep.rows)
	pmet := printProbes(w, rep.probes)
	fmt.Fprintf(w, "\n%s\n", summary(o, rep, met, fails, pmet))
}

// printProbes prints the probe table and returns the goals met per target.
func printProbes(w io.Writer, ps []probeResult) map[string]int {
	met := map[string]int{}
	if len(ps) == 0 {
		return met
	}
	fmt.Fprintln(w, "\n| every model fails (one request) | gateway | answered after | status | Retry-After | OpenAI shape | upstream requests | goal |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, p := range ps {
		status := fmt.Sprint(p.status)
		if p.status == 0 {
			status = p.why
		}
		ra, shape, goal := p.retryAfter, "no", "✗"
		if ra == "" {
			ra = "—"
		}
		if p.shape {
			shape = "yes"
		}
		if p.met() {
			goal = "✓"
			met[p.target]++
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %d | %s (≤ %v) |\n", p.probe.label, p.target, dur(p.took), status, ra, shape, p.upstream, goal, p.probe.limit)
	}
	return met
}

func failText(st stats) string {
	if st.failures == 0 {
		return "0"
	}
	return fmt.Sprintf("**%d** (%s)", st.failures, st.reasons)
}

func backText(st stats) string {
	if !st.backOK {
		return "not within " + dur(st.back)
	}
	return dur(st.back)
}

// goalText lists the goals a row misses ("✓" when it meets them all).
func goalText(r row, st stats) string {
	if st.met {
		return "✓"
	}
	var miss []string
	if !st.failOK {
		miss = append(miss, "failures")
	}
	if !st.p99OK {
		miss = append(miss, "p99 > "+dur(st.p99Limit))
	}
	if !st.sickOK {
		miss = append(miss, "primary")
	}
	if !st.backGoal {
		miss = append(miss, "back > "+dur(cooldown+2*time.Second))
	}
	return "✗ " + strings.Join(miss, ", ")
}

func summary(o options, rep *report, met, fails, pmet map[string]int) string {
	var parts []string
	for _, t := range o.targets {
		n := 0
		for _, r := range rep.rows {
			if r.target == t {
				n++
			}
		}
		np := 0
		for _, p := range rep.probes {
			if p.target == t {
				np++
			}
		}
		if n == 0 && np == 0 {
			parts = append(parts, t+" skipped")
			continue
		}
		parts = append(parts, fmt.Sprintf("%s met every goal in %d/%d outage kinds and %d/%d probes, %d client failures", t, met[t], n, pmet[t], np, fails[t]))
	}
	return fmt.Sprintf("summary: %s; total %v", strings.Join(parts, "; "), rep.took.Round(time.Second))
}

// dur formats a duration for the table: 0.4 ms, 24 ms, 1.06 s, 18.2 s.
func dur(d time.Duration) string {
	switch {
	case d == 0:
		return "0"
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
	case d < 10*time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// printNotes prints the notes of the rows marked †, kinds with the same
// note together ("hang, stall: ...").
func printNotes(w io.Writer, notes []note) {
	var texts []string
	kinds := map[string][]string{}
	for _, n := range notes {
		if kinds[n.text] == nil {
			texts = append(texts, n.text)
		}
		kinds[n.text] = append(kinds[n.text], n.kind)
	}
	for _, t := range texts {
		fmt.Fprintf(w, "\n† %s: %s\n", strings.Join(kinds[t], ", "), t)
	}
}

// printLate says how late the load generator's ticks fired: late ticks
// mean the machine stalled (other load, a paused VM), and the rows where
// that happened measure the machine as much as the gateways.
func printLate(w io.Writer, rows []row) {
	var worst time.Duration
	var where []string
	for _, r := range rows {
		var m time.Duration
		for _, rec := range r.recs {
			m = max(m, rec.late)
		}
		worst = max(worst, m)
		if m > 100*time.Millisecond {
			where = append(where, fmt.Sprintf("%s/%s %s", r.kind.name, r.target, dur(m)))
		}
	}
	if len(where) == 0 {
		fmt.Fprintf(w, "\nThe load generator kept its schedule (latest tick %s late).\n", dur(worst))
		return
	}
	fmt.Fprintf(w, "\nThe load generator fell behind (ticks more than 100 ms late: the machine stalled) in: %s.\n", strings.Join(where, ", "))
}
