package fleet

import (
	"slices"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// BenchmarkFleetActPropagation: from an operator's hold on one process
// until another process's Manager reports it as the operator's (Manual
// "hold" with its reason), on a real redis-server and the store's own
// clock; reports p50 and p99 in µs and the commands each act costs the
// store (one script call: the act travels inside it). Each iteration resets
// the breaker first (untimed).
func BenchmarkFleetActPropagation(b *testing.B) {
	srv := redistest.Start(b)
	seen := make(chan fallback.Transition, 16)
	var ops []operable
	for i := range 2 {
		s := startStore(b, srv, Options{Prefix: "actbench"})
		set := fallback.Settings{Primary: "a", Chain: []string{"b"}, Backend: s.ModelBackend("held")}
		if i == 1 {
			set.OnTransition = func(t fallback.Transition) { seen <- t }
		}
		if _, err := fallback.New(set); err != nil {
			b.Fatal(err)
		}
		ops = append(ops, set.Backend.(operable))
	}
	await := func(manual string) fallback.Transition {
		for {
			select {
			case t := <-seen:
				if t.Manual == manual {
					return t
				}
			case <-time.After(5 * time.Second):
				b.Fatalf("no %s reached the other process within 5s", manual)
			}
		}
	}
	var (
		delays []time.Duration
		calls  int64
	)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if len(delays) > 0 { // held by the last iteration
			_ = ops[0].Operate("reset", "", " (by bench)", time.Time{})
			await("reset")
		}
		before := scriptCalls(b, srv)
		b.StartTimer()
		start := time.Now()
		_ = ops[0].Operate("hold", "", "INC-42 (by bench)", start.Add(time.Hour))
		if t := await("hold"); t.Reason != "INC-42 (by bench)" {
			b.Fatalf("the other process reports %v", t)
		}
		delays = append(delays, time.Since(start))
		b.StopTimer()
		calls += scriptCalls(b, srv) - before
		b.StartTimer()
	}
	reportPropagation(b, delays, calls, "scripts/act")
}

// reportPropagation reports a propagation benchmark's figures: the p50 and
// p99 of delays in µs, and the script calls per event (calls over the
// events timed) as metric unit.
func reportPropagation(b *testing.B, delays []time.Duration, calls int64, unit string) {
	b.Helper()
	slices.Sort(delays)
	q := func(f float64) float64 { return float64(delays[int(f*float64(len(delays)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
	b.ReportMetric(float64(calls)/float64(len(delays)), unit)
}
