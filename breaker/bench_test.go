package breaker

import (
	"context"
	"testing"
	"time"
)

func BenchmarkClosedAllowSuccess(b *testing.B) {
	br, _ := New(Settings{Name: "bench"})
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, err := br.Allow()
			if err != nil {
				b.Fatal(err)
			}
			p.Success()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, _ := br.Allow()
				p.Success()
			}
		})
	})
}

// BenchmarkClosedRateWindow is the closed path with a rate window (§8.1,
// §8.2): one clock read and one atomic add per verdict on top of the floor.
func BenchmarkClosedRateWindow(b *testing.B) {
	br, _ := New(Settings{Name: "bench", FailureRate: 0.5, SlowCallAfter: time.Second, SlowCallRate: 0.5})
	b.Run("Success", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, _ := br.Allow()
			p.Success()
		}
	})
	b.Run("SuccessAfter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, _ := br.Allow()
			p.SuccessAfter(time.Millisecond)
		}
	})
}

// benchOpen returns a breaker that stays open for the whole benchmark.
func benchOpen(b *testing.B, now func() time.Time) *Breaker {
	br, err := New(Settings{Name: "bench", FailureThreshold: 1, RecoveryDuration: time.Hour, Now: now})
	if err != nil {
		b.Fatal(err)
	}
	p, _ := br.Allow()
	p.Failure()
	return br
}

func BenchmarkOpenRefusal(b *testing.B) {
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, clock := range []struct {
		name string
		now  func() time.Time
	}{
		{"default-clock", nil},
		{"fixed-Now", func() time.Time { return fixed }}, // the breaker's own cost
	} {
		br := benchOpen(b, clock.now)
		b.Run(clock.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := br.Allow(); err == nil {
					b.Fatal("granted")
				}
			}
		})
		b.Run(clock.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					_, _ = br.Allow()
				}
			})
		})
	}
}

func BenchmarkWouldAllowOpen(b *testing.B) {
	br := benchOpen(b, nil)
	b.ReportAllocs()
	for b.Loop() {
		if br.WouldAllow() {
			b.Fatal("would allow")
		}
	}
}

func BenchmarkClockReads(b *testing.B) {
	epoch := time.Now()
	b.Run("time.Now", func(b *testing.B) {
		for b.Loop() {
			_ = time.Now()
		}
	})
	b.Run("time.Since(monotonic)", func(b *testing.B) {
		for b.Loop() {
			_ = time.Since(epoch)
		}
	})
}

// BenchmarkClosedDo is Do's closed path (§8.4: within 1.5× of
// BenchmarkClosedAllowSuccess; fn's own call is part of the price).
func BenchmarkClosedDo(b *testing.B) {
	br, _ := New(Settings{Name: "bench"})
	ctx := context.Background()
	fn := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Do(ctx, br, fn); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClosedDoFloor is what any Do that keeps its contract pays on the
// closed path besides fn's call: one ctx.Deadline() (§8.4: time the call only
// under a deadline) and one deferred call (a panicking fn fails its permit),
// here a deferred call of a no-op, the cheapest defer there is. Compare it
// with BenchmarkClosedDo and BenchmarkClosedAllowSuccess.
func BenchmarkClosedDoFloor(b *testing.B) {
	ctx := context.Background()
	fn := func(context.Context) (int, error) { return 1, nil }
	b.ReportAllocs()
	for b.Loop() {
		if _, err := doFloor(ctx, fn); err != nil {
			b.Fatal(err)
		}
	}
}

//go:noinline
func doFloor(ctx context.Context, fn func(context.Context) (int, error)) (int, error) {
	if _, ok := ctx.Deadline(); ok {
		sinkBool = true
	}
	defer noop()
	return fn(ctx)
}

var sinkBool bool

//go:noinline
func noop() {}
