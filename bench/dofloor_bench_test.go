package bench

import (
	"context"
	"testing"
)

// BenchmarkClosedDoFloor is what any breaker.Do that keeps its contract pays
// on the closed path besides the gate and fn's call: one ctx.Deadline()
// (SEMANTICS §8.4: Do times the call only under a deadline) and one deferred
// call (a panicking fn still fails its permit), here a deferred no-op, the
// cheapest defer there is. It runs in compare.sh's rounds beside
// BenchmarkClosed, so the floor and breaker.Do's goal (≤ 0.1× gobreaker's
// Execute, issue 34) are read from the same run (docs/performance.md).
func BenchmarkClosedDoFloor(b *testing.B) {
	ctx := context.Background()
	b.Run("lib=loopctl-floor", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, err := doFloor(ctx, okCtx)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		}
	})
}

// doFloor is the floor: a deadline check and a deferred call around fn.
//
//go:noinline
func doFloor(ctx context.Context, fn func(context.Context) (int, error)) (int, error) {
	if _, ok := ctx.Deadline(); ok {
		sinkDeadline = true
	}
	defer floorNoop()
	return fn(ctx)
}

var sinkDeadline bool

//go:noinline
func floorNoop() {}
