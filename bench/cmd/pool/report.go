package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// verdict is one goal judged on one scenario.
type verdict struct {
	sc       scenario
	g        goal
	loopctl  string // the figure, "" when loopctl was not measured
	judged   bool   // loopctl ran the pool: its figure is judged
	pass     bool
	portkey  string // Portkey's figure, "" when not measured
	measured bool   // loopctl gave a figure
}

// judge computes every goal of every scenario in rs.
func judge(rs []result) []verdict {
	var vs []verdict
	var seen []string
	for _, r := range rs {
		if slices.Contains(seen, r.sc.name) {
			continue
		}
		seen = append(seen, r.sc.name)
		for _, g := range append(slices.Clone(every), r.sc.goals...) {
			v := verdict{sc: r.sc, g: g}
			for _, x := range rs {
				if x.sc.name != r.sc.name {
					continue
				}
				f, ok := g.measure(&x)
				text := "—"
				if ok {
					text = g.unit.format(f)
				}
				if x.target == "portkey" {
					v.portkey = text
					continue
				}
				v.loopctl, v.measured, v.judged, v.pass = text, ok, x.pool, ok && g.met(f)
			}
			vs = append(vs, v)
		}
	}
	return vs
}

// printReport prints the settings, one line per goal and the summary.
func printReport(w io.Writer, o options, rs []result, took time.Duration) {
	fmt.Fprintf(w, "\nOpen loop, %d req/s for %v (one in four streaming), %d session keys; m3 sick from %v to %v; m1, m2 healthy.\n",
		o.rate, o.duration, sessions, o.sickFrom, o.sickTo)
	fmt.Fprintf(w, "loopctl: pool p = [m1/x, m2/x, m3/x], breaker {trip_threshold: %d, recovery_timeout: %v, recovery_backoff: %d}, first_byte %v (slow, hang: hedge_after %v).\n",
		tripThreshold, recoveryTimeout, recoveryBackoff, firstByte, hedgeAfter)
	if slices.ContainsFunc(rs, func(r result) bool { return r.target == "portkey" }) {
		fmt.Fprintf(w, "Portkey: loadbalance over m1, m2, m3, weights 1, retry attempts %d each, request_timeout %v.\n", portkeyRetries, firstByte)
	}
	fmt.Fprintf(w, "A session's home: SEMANTICS §9.3 rule 3(b) over m1/x, m2/x, m3/x (pool.Hash, pool.Score). Time to first content: a whole answer's end.\n\n")
	fmt.Fprintln(w, "| run | goal | loopctl | bound | result | Portkey |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	vs := judge(rs)
	for _, v := range vs {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", or(v.g.run, v.sc.label), v.g.text, or(v.loopctl, "not run"), v.g.bound(), v.result(), or(v.portkey, "not run"))
	}
	printNotes(w, rs)
	printLate(w, rs)
	fmt.Fprintf(w, "\n%s\n", summary(vs, took))
}

// result is PASS or FAIL for a judged figure, else why it is not judged.
func (v verdict) result() string {
	switch {
	case v.loopctl == "":
		return "—"
	case !v.judged:
		return "not judged (no pool)"
	case v.pass:
		return "PASS"
	}
	return "**FAIL**"
}

func or(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// summary counts the goals loopctl met, and those it could not be judged on.
func summary(vs []verdict, took time.Duration) string {
	met, judged := 0, 0
	for _, v := range vs {
		if v.judged && v.loopctl != "" {
			judged++
			if v.pass {
				met++
			}
		}
	}
	s := fmt.Sprintf("summary: loopctl met %d of %d goals", met, judged)
	if n := len(vs) - judged; n > 0 {
		s += fmt.Sprintf(" (%d not judged: no pool, or not run)", n)
	}
	return s + fmt.Sprintf("; total %v", took.Round(time.Second))
}

// printNotes prints what the runs said about loopctl's config.
func printNotes(w io.Writer, rs []result) {
	var notes []string
	for _, r := range rs {
		if r.note != "" && !slices.Contains(notes, r.note) {
			notes = append(notes, r.note)
			fmt.Fprintf(w, "\nloopctl: %s\n", r.note)
		}
	}
}

// printLate says how late the load generator's ticks fired: late ticks
// mean the machine stalled, and the runs where that happened measure the
// machine as much as the gateways.
func printLate(w io.Writer, rs []result) {
	var worst time.Duration
	var where []string
	for _, r := range rs {
		var m time.Duration
		for _, rec := range r.recs {
			m = max(m, rec.late)
		}
		worst = max(worst, m)
		if m > 100*time.Millisecond {
			where = append(where, fmt.Sprintf("%s/%s %v", r.sc.name, r.target, m.Round(time.Millisecond)))
		}
	}
	if len(where) == 0 {
		fmt.Fprintf(w, "\nThe load generator kept its schedule (latest tick %v late).\n", worst.Round(time.Millisecond))
		return
	}
	fmt.Fprintf(w, "\nThe load generator fell behind (ticks more than 100 ms late) in: %s.\n", strings.Join(where, ", "))
}
