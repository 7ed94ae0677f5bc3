package main

import (
	"fmt"
	"io"
	"strings"
)

// ours reports whether lib is one of this project's variants.
func ours(lib string) bool { return strings.HasPrefix(lib, "loopctl") }

// timeLimit is the issues' bound on loopctl variant lib's time as a ratio to
// a peer's, for single-goroutine benchmarks: 0 means no target for that
// pair.
func timeLimit(family, lib, peer string) (limit float64, strict bool) {
	switch {
	case family == "Closed" && (lib == "loopctl" || lib == "loopctl-backoff") && peer == "gobreaker-execute":
		return 0.05, false // SEMANTICS §8.4: "at most 0.05× gobreaker's Execute", with or without backoff
	case family == "Closed" && (lib == "loopctl-do" || lib == "loopctl-backoff-do") && peer == "gobreaker-execute":
		return 0.1, false // issue 34: breaker.Do "≤ 0.1× gobreaker's Execute"
	case (family == "Closed" || family == "Open") && strings.HasPrefix(peer, "gobreaker"):
		return 0.2, false // "at most 1/5 of gobreaker v2's time"
	case family == "Closed" && peer == "eapache":
		return 1, false // "no slower than eapache's"
	case family == "RetryFirstTry" && (peer == "backoff" || peer == "retry-go"):
		return 1, true // "faster than both retry peers"
	}
	return 0, false
}

// zeroAllocFamilies are the paths whose loopctl calls must not allocate.
var zeroAllocFamilies = map[string]bool{
	"Closed": true, "ClosedParallel": true,
	"Open": true, "OpenParallel": true,
	"RetryFirstTry": true, "RetryFirstTryParallel": true,
}

func mark(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func within(ratio, limit float64, strict bool) bool {
	if strict {
		return ratio < limit
	}
	return ratio <= limit
}

func fmtNS(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func fmtAllocs(ours, peer float64) string {
	if peer == 0 {
		return fmt.Sprintf("%g vs %g", ours, peer)
	}
	return fmt.Sprintf("%g vs %g (%.2fx)", ours, peer, ours/peer)
}

// detail describes a ratio a/b: of the medians (the verdict) and of the
// fastest samples (a hint of how much of a miss is noise).
func detail(a, b result) string {
	return fmt.Sprintf("%.3f (%s vs %s ns/op; fastest samples: %.3f)",
		a.ns/b.ns, fmtNS(a.ns), fmtNS(b.ns), a.minNS/b.minNS)
}

// target is one checked target.
type target struct {
	name, detail string
	ok           bool
}

// report writes the report on rs: the summary, the table of loopctl against
// its peers, and every target checked with its verdict.
func report(w io.Writer, rs []result) {
	keys, byKey := groupByKey(rs)
	summary(w, keys, byKey)
	targets := peerTable(w, keys, byKey)
	targets = append(targets, collapse(rs)...)
	targets = append(targets, registryScaling(rs)...)
	printTargets(w, targets)
}

// groupByKey groups rs by benchmark key, keys in order of first appearance.
func groupByKey(rs []result) ([]key, map[key][]result) {
	byKey := map[key][]result{}
	var keys []key
	for _, r := range rs {
		if _, seen := byKey[r.key]; !seen {
			keys = append(keys, r.key)
		}
		byKey[r.key] = append(byKey[r.key], r)
	}
	return keys, byKey
}

// peerTable writes one row per benchmark, loopctl variant and peer, and
// returns the targets it checks: the time limits against peers and the
// zero-allocation paths.
func peerTable(w io.Writer, keys []key, byKey map[key][]result) []target {
	var targets []target
	fmt.Fprintln(w, "## loopctl vs peers (medians; time ratio = loopctl ns/op ÷ peer ns/op)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| benchmark | cpu | loopctl | peer | loopctl ns/op | peer ns/op | time ratio | allocs/op loopctl vs peer | target |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, k := range keys {
		group := byKey[k]
		var peers []result
		for _, r := range group {
			if !ours(r.lib) {
				peers = append(peers, r)
			}
		}
		for _, o := range group {
			if !ours(o.lib) {
				continue
			}
			if len(peers) == 0 {
				fmt.Fprintf(w, "| %s | %d | %s | — | %s | — | — | %g | |\n", k, k.procs, o.lib, fmtNS(o.ns), o.alloc)
			}
			targets = append(targets, vsPeers(w, k, o, peers)...)
			if zeroAllocFamilies[k.family] {
				targets = append(targets, target{
					name:   fmt.Sprintf("%s (cpu %d): %s allocates nothing", k, k.procs, o.lib),
					detail: fmt.Sprintf("%g allocs/op, %g B/op", o.alloc, o.bytes),
					ok:     o.alloc == 0,
				})
			}
		}
	}
	return targets
}

// vsPeers writes the rows of loopctl variant o against each of peers in
// benchmark k, and returns the time-limit targets among them (single
// goroutine only).
func vsPeers(w io.Writer, k key, o result, peers []result) []target {
	var targets []target
	for _, p := range peers {
		ratio := o.ns / p.ns
		cell := ""
		if limit, strict := timeLimit(k.family, o.lib, p.lib); limit > 0 && k.procs == 1 {
			op := "≤"
			if strict {
				op = "<"
			}
			ok := within(ratio, limit, strict)
			cell = fmt.Sprintf("%s%.2f %s", op, limit, mark(ok))
			targets = append(targets, target{
				name:   fmt.Sprintf("%s: %s time %s %.2f× %s", k.family, o.lib, op, limit, p.lib),
				detail: detail(o, p),
				ok:     ok,
			})
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %.3f | %s | %s |\n",
			k, k.procs, o.lib, p.lib, fmtNS(o.ns), fmtNS(p.ns), ratio, fmtAllocs(o.alloc, p.alloc), cell)
	}
	return targets
}

// printTargets writes the table of targets with their verdicts and the
// count met and missed.
func printTargets(w io.Writer, targets []target) {
	fmt.Fprintln(w)
	fmt.Fprintln(w, "## Targets")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | measured | verdict |")
	fmt.Fprintln(w, "|---|---|---|")
	missed := 0
	for _, t := range targets {
		if !t.ok {
			missed++
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", t.name, t.detail, mark(t.ok))
	}
	fmt.Fprintf(w, "\n%d targets checked, %d met, %d missed.\n", len(targets), len(targets)-missed, missed)
}

// collapse checks "under RunParallel on N cores, no path is slower per op
// than on 1 core" for every loopctl variant of every *Parallel benchmark.
func collapse(rs []result) []target {
	one := map[string]result{}
	for _, r := range rs {
		if ours(r.lib) && strings.HasSuffix(r.family, "Parallel") && r.procs == 1 {
			one[r.key.String()+"|"+r.lib] = r
		}
	}
	var ts []target
	for _, r := range rs {
		if !ours(r.lib) || !strings.HasSuffix(r.family, "Parallel") || r.procs == 1 {
			continue
		}
		base, ok := one[r.key.String()+"|"+r.lib]
		if !ok {
			continue
		}
		ratio := r.ns / base.ns
		ts = append(ts, target{
			name:   fmt.Sprintf("%s %s: ns/op on %d cores ≤ on 1 core", r.key, r.lib, r.procs),
			detail: detail(r, base),
			ok:     ratio <= 1,
		})
	}
	return ts
}

// registryScaling checks "the per-call cost with 10,000 tools within 1.5x
// of the cost with 1 tool", per family (Registry, RegistryParallel) and cpu.
func registryScaling(rs []result) []target {
	type id struct {
		family string
		procs  int
	}
	small, large := map[id]result{}, map[id]result{}
	var order []id
	for _, r := range rs {
		if r.lib != "loopctl" || !strings.HasPrefix(r.family, "Registry") {
			continue
		}
		i := id{r.family, r.procs}
		switch r.params {
		case "tools=1":
			small[i] = r
			order = append(order, i)
		case "tools=10000":
			large[i] = r
		}
	}
	var ts []target
	for _, i := range order {
		s, l := small[i], large[i]
		if l.n == 0 {
			continue
		}
		ratio := l.ns / s.ns
		ts = append(ts, target{
			name:   fmt.Sprintf("%s (cpu %d): 10,000 tools ≤ 1.5× 1 tool", i.family, i.procs),
			detail: detail(l, s),
			ok:     ratio <= 1.5,
		})
	}
	return ts
}

// summary prints one compact row per single-goroutine benchmark and loopctl
// variant: its median time and allocations and its time ratio to each peer
// (the table for docs/performance.md).
func summary(w io.Writer, keys []key, byKey map[key][]result) {
	fmt.Fprintln(w, "## Summary (one goroutine; medians; ratio = loopctl time ÷ peer time)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| benchmark | loopctl | ns/op | allocs/op | ratio to each peer (peer allocs/op) |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, k := range keys {
		if k.procs != 1 || strings.HasSuffix(k.family, "Parallel") {
			continue
		}
		group := byKey[k]
		for _, o := range group {
			if !ours(o.lib) {
				continue
			}
			var cells []string
			for _, p := range group {
				if !ours(p.lib) {
					cells = append(cells, fmt.Sprintf("%s %.2f (%g)", p.lib, o.ns/p.ns, p.alloc))
				}
			}
			peers := strings.Join(cells, ", ")
			if peers == "" {
				peers = "—"
			}
			fmt.Fprintf(w, "| %s | %s | %s | %g | %s |\n", k, o.lib, fmtNS(o.ns), o.alloc, peers)
		}
	}
	fmt.Fprintln(w)
}
