package main

import (
	"bytes"
	"strings"
	"testing"
)

const sampleOutput = `goos: linux
goarch: amd64
pkg: github.com/loopctl/loopctl-go/bench
BenchmarkClosed/lib=loopctl         	 1000	        4.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkClosed/lib=loopctl         	 1000	        6.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkClosed/lib=loopctl         	 1000	        5.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkClosed/lib=gobreaker-twostep	 1000	       50.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkClosed/lib=loopctl-do      	 1000	        9.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkClosed/lib=gobreaker-execute	 1000	      100.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkClosed/lib=eapache         	 1000	        4.00 ns/op	       0 B/op	       0 allocs/op
BenchmarkOpen/lib=loopctl           	 1000	       30.0 ns/op	      48 B/op	       1 allocs/op
BenchmarkOpen/lib=gobreaker-execute 	 1000	      100.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkClosedParallel/lib=loopctl 	 1000	       10.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkClosedParallel/lib=loopctl-2	 1000	        6.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkRegistry/tools=1/lib=loopctl	 1000	       20.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkRegistry/tools=10000/lib=loopctl	 1000	       40.0 ns/op	       0 B/op	       0 allocs/op
BenchmarkFallback/state=primary/lib=loopctl-2	 1000	       40.0 ns/op	       0 B/op	       0 allocs/op
--- BENCH: some log line
PASS
`

func TestParse(t *testing.T) {
	rs, err := parse(strings.NewReader(sampleOutput))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 12 {
		t.Fatalf("got %d results, want 12: %+v", len(rs), rs)
	}
	first := rs[0]
	if first.family != "Closed" || first.lib != "loopctl" || first.procs != 1 || first.n != 3 || first.ns != 5 {
		t.Fatalf("first result %+v, want Closed/loopctl on 1 cpu, 3 samples, median 5", first)
	}
	var reg, fb result
	for _, r := range rs {
		if r.family == "Registry" && r.params == "tools=10000" {
			reg = r
		}
		if r.family == "Fallback" {
			fb = r
		}
	}
	if reg.lib != "loopctl" || reg.ns != 40 {
		t.Fatalf("registry result %+v", reg)
	}
	if fb.procs != 2 || fb.params != "state=primary" {
		t.Fatalf("fallback result %+v, want procs 2, params state=primary", fb)
	}
}

func TestSplitProcs(t *testing.T) {
	for _, tc := range []struct {
		in    string
		name  string
		procs int
	}{
		{"BenchmarkClosed/lib=loopctl-2", "BenchmarkClosed/lib=loopctl", 2},
		{"BenchmarkClosed/lib=loopctl", "BenchmarkClosed/lib=loopctl", 1},
		{"BenchmarkClosed/lib=failsafe-executor", "BenchmarkClosed/lib=failsafe-executor", 1},
		{"BenchmarkClosed/lib=failsafe-executor-16", "BenchmarkClosed/lib=failsafe-executor", 16},
		{"BenchmarkX-1/tools=1", "BenchmarkX-1/tools=1", 1},
	} {
		name, procs := splitProcs(tc.in)
		if name != tc.name || procs != tc.procs {
			t.Errorf("splitProcs(%q) = %q, %d; want %q, %d", tc.in, name, procs, tc.name, tc.procs)
		}
	}
}

func TestMedian(t *testing.T) {
	get := func(s sample) float64 { return s.ns }
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{9, 1, 5}, 5},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		ss := make([]sample, len(tc.in))
		for i, v := range tc.in {
			ss[i].ns = v
		}
		if got := median(ss, get); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestReportTargets(t *testing.T) {
	rs, err := parse(strings.NewReader(sampleOutput))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	report(&buf, rs)
	out := buf.String()
	for _, want := range []string{
		// 5 / 50 = 0.1: within 1/5 of gobreaker.
		"| Closed | 1 | loopctl | gobreaker-twostep | 5.00 | 50.00 | 0.100 | 0 vs 0 | ≤0.20 met |",
		// 5 / 100: within SEMANTICS §8.4's 0.05 of gobreaker's Execute;
		// breaker.Do's 9 / 100 within issue 34's 0.1.
		"| Closed | 1 | loopctl | gobreaker-execute | 5.00 | 100.0 | 0.050 | 0 vs 0 | ≤0.05 met |",
		"| Closed | 1 | loopctl-do | gobreaker-execute | 9.00 | 100.0 | 0.090 | 0 vs 0 | ≤0.10 met |",
		// 5 / 4 = 1.25: slower than eapache.
		"| Closed | 1 | loopctl | eapache | 5.00 | 4.00 | 1.250 | 0 vs 0 | ≤1.00 **missed** |",
		// 30 / 100 = 0.3 and one allocation: two misses.
		"≤0.20 **missed**",
		"| Open (cpu 1): loopctl allocates nothing | 1 allocs/op, 48 B/op | **missed** |",
		// 6 ns on 2 cores vs 10 on 1: no collapse.
		"| ClosedParallel loopctl: ns/op on 2 cores ≤ on 1 core | 0.600 (6.00 vs 10.00 ns/op; fastest samples: 0.600) | met |",
		// 40 / 20 = 2: registry scaling missed.
		"| Registry (cpu 1): 10,000 tools ≤ 1.5× 1 tool | 2.000 (40.00 vs 20.00 ns/op; fastest samples: 2.000) | **missed** |",
		// The summary row lists every peer's ratio.
		"| Closed | loopctl | 5.00 | 0 | gobreaker-twostep 0.10 (0), gobreaker-execute 0.05 (0), eapache 1.25 (0) |",
		// A benchmark without peers still appears.
		"| Fallback/state=primary | 2 | loopctl | — | 40.00 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q\n%s", want, out)
		}
	}
}
