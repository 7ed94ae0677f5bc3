package bench

// Breaker benchmarks: the closed path, the open refusal and half-open
// contention, for loopctl and every peer, single goroutine and RunParallel.
//
// lib=loopctl is loopctl's two-step gate (Allow, then Permit.Done(err)), the
// counterpart of gobreaker's TwoStepCircuitBreaker and failsafe's
// TryAcquirePermit/RecordSuccess. lib=loopctl-do is breaker.Do, the
// counterpart of gobreaker's Execute, failsafe's executor and eapache's Run.
//
// Fairness notes, per library (all read the wall/monotonic clock their own way):
//   - loopctl: the gate and a closed-path verdict are lock-free (one atomic
//     load each, a seqlock-published state word); a refusal reads the
//     monotonic clock (time.Since) for the cooldown/lease check and returns
//     a *breaker.OpenError that is cached and reallocated only when its
//     RetryIn, rounded up to a millisecond, changes (so at most one
//     allocation per millisecond, which allocs/op rounds to 0).
//   - gobreaker: every gate and every report takes a sync.Mutex and reads
//     time.Now under it; Execute also defers a recover closure.
//   - failsafe: every gate and report takes a sync.Mutex; the closed gate
//     reads no clock, the open gate reads the clock; the executor allocates
//     its execution record per call.
//   - eapache: an atomic load of the state and, on a closed-path success, no
//     lock at all (it skips bookkeeping of successes in closed state); it
//     also runs the function inside a deferred recover.
// Every benchmark checks each result so that a setup that drifted into
// another state fails the benchmark instead of measuring the wrong path.

import (
	"context"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
)

// sink keeps results alive where the compiler could otherwise drop them.
var sink int

func BenchmarkClosed(b *testing.B) {
	ctx := context.Background()
	b.Run("lib=loopctl", func(b *testing.B) {
		br := loopctlClosed(b)
		b.ReportAllocs()
		for b.Loop() {
			p, err := br.Allow()
			if err != nil {
				b.Fatal(err)
			}
			p.Done(nil)
		}
	})
	b.Run("lib=loopctl-do", func(b *testing.B) {
		br := loopctlClosed(b)
		b.ReportAllocs()
		for b.Loop() {
			v, err := breaker.Do(ctx, br, okCtx)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		}
	})
	b.Run("lib=loopctl-backoff", func(b *testing.B) {
		br := loopctlBackoffClosed(b) // §9.1: the trip count is touched only on a trip
		b.ReportAllocs()
		for b.Loop() {
			p, err := br.Allow()
			if err != nil {
				b.Fatal(err)
			}
			p.Done(nil)
		}
	})
	b.Run("lib=loopctl-backoff-do", func(b *testing.B) {
		br := loopctlBackoffClosed(b)
		b.ReportAllocs()
		for b.Loop() {
			v, err := breaker.Do(ctx, br, okCtx)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		}
	})
	b.Run("lib=gobreaker-execute", func(b *testing.B) {
		cb := gobreakerExecClosed(b)
		b.ReportAllocs()
		for b.Loop() {
			v, err := cb.Execute(ok)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		}
	})
	b.Run("lib=gobreaker-twostep", func(b *testing.B) {
		cb := gobreakerTwoStepClosed(b)
		b.ReportAllocs()
		for b.Loop() {
			done, err := cb.Allow()
			if err != nil {
				b.Fatal(err)
			}
			done(nil)
		}
	})
	b.Run("lib=failsafe", func(b *testing.B) {
		cb := failsafeClosed(b)
		b.ReportAllocs()
		for b.Loop() {
			if !cb.TryAcquirePermit() {
				b.Fatal("refused")
			}
			cb.RecordSuccess()
		}
	})
	b.Run("lib=failsafe-executor", func(b *testing.B) {
		ex, _ := failsafeExecClosed(b)
		b.ReportAllocs()
		for b.Loop() {
			v, err := ex.Get(ok)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		}
	})
	b.Run("lib=eapache", func(b *testing.B) {
		br := eapacheClosed(b)
		b.ReportAllocs()
		for b.Loop() {
			if err := br.Run(okErr); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkClosedParallel(b *testing.B) {
	ctx := context.Background()
	b.Run("lib=loopctl", func(b *testing.B) {
		br := loopctlClosed(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, err := br.Allow()
				if err != nil {
					b.Error(err)
					return
				}
				p.Done(nil)
			}
		})
	})
	b.Run("lib=loopctl-do", func(b *testing.B) {
		br := loopctlClosed(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := breaker.Do(ctx, br, okCtx); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("lib=gobreaker-execute", func(b *testing.B) {
		cb := gobreakerExecClosed(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := cb.Execute(ok); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("lib=gobreaker-twostep", func(b *testing.B) {
		cb := gobreakerTwoStepClosed(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				done, err := cb.Allow()
				if err != nil {
					b.Error(err)
					return
				}
				done(nil)
			}
		})
	})
	b.Run("lib=failsafe", func(b *testing.B) {
		cb := failsafeClosed(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !cb.TryAcquirePermit() {
					b.Error("refused")
					return
				}
				cb.RecordSuccess()
			}
		})
	})
	b.Run("lib=failsafe-executor", func(b *testing.B) {
		ex, _ := failsafeExecClosed(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := ex.Get(ok); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("lib=eapache", func(b *testing.B) {
		br := eapacheClosed(b)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := br.Run(okErr); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// benchRefusals is shared by the open and half-open benchmarks: in both, every
// gate call must be refused. The same code measures "open" and "probe in
// flight" because the setups differ, not the calls.
func benchRefusals(b *testing.B, open bool) {
	ctx := context.Background()
	setupLoopctl := loopctlOpen
	setupGobreakerExec := gobreakerExecOpen
	setupGobreakerTwoStep := gobreakerTwoStepOpen
	setupFailsafe := failsafeOpen
	setupFailsafeExec := failsafeExecOpen
	if !open {
		setupLoopctl = loopctlHalfOpen
		setupGobreakerExec = gobreakerExecHalfOpen
		setupGobreakerTwoStep = gobreakerTwoStepHalfOpen
		setupFailsafe = failsafeHalfOpen
		setupFailsafeExec = failsafeExecHalfOpen
	}
	b.Run("lib=loopctl", func(b *testing.B) {
		br := setupLoopctl(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := br.Allow(); err == nil {
				b.Fatal("allowed")
			}
		}
	})
	b.Run("lib=loopctl-do", func(b *testing.B) {
		br := setupLoopctl(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := breaker.Do(ctx, br, okCtx); err == nil {
				b.Fatal("allowed")
			}
		}
	})
	b.Run("lib=gobreaker-execute", func(b *testing.B) {
		cb := setupGobreakerExec(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Execute(ok); err == nil {
				b.Fatal("allowed")
			}
		}
	})
	b.Run("lib=gobreaker-twostep", func(b *testing.B) {
		cb := setupGobreakerTwoStep(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cb.Allow(); err == nil {
				b.Fatal("allowed")
			}
		}
	})
	b.Run("lib=failsafe", func(b *testing.B) {
		cb := setupFailsafe(b)
		b.ReportAllocs()
		for b.Loop() {
			if cb.TryAcquirePermit() {
				b.Fatal("allowed")
			}
		}
	})
	b.Run("lib=failsafe-executor", func(b *testing.B) {
		ex, _ := setupFailsafeExec(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ex.Get(ok); err == nil {
				b.Fatal("allowed")
			}
		}
	})
	if open { // eapache has no probe slot: see setup_test.go
		b.Run("lib=eapache", func(b *testing.B) {
			br := eapacheOpen(b)
			b.ReportAllocs()
			for b.Loop() {
				if err := br.Run(okErr); err == nil {
					b.Fatal("allowed")
				}
			}
		})
	}
}

// benchRefusalsParallel is benchRefusals under RunParallel; parallelism
// multiplies the goroutines per P (half-open contention uses many). Every
// library's call goes through the same func value (one indirect call each).
func benchRefusalsParallel(b *testing.B, open bool, parallelism int) {
	ctx := context.Background()
	setupLoopctl := loopctlOpen
	setupGobreakerExec := gobreakerExecOpen
	setupGobreakerTwoStep := gobreakerTwoStepOpen
	setupFailsafe := failsafeOpen
	setupFailsafeExec := failsafeExecOpen
	if !open {
		setupLoopctl = loopctlHalfOpen
		setupGobreakerExec = gobreakerExecHalfOpen
		setupGobreakerTwoStep = gobreakerTwoStepHalfOpen
		setupFailsafe = failsafeHalfOpen
		setupFailsafeExec = failsafeExecHalfOpen
	}
	run := func(b *testing.B, refused func() bool) {
		b.ReportAllocs()
		b.SetParallelism(parallelism)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if !refused() {
					b.Error("allowed")
					return
				}
			}
		})
	}
	b.Run("lib=loopctl", func(b *testing.B) {
		br := setupLoopctl(b)
		run(b, func() bool { _, err := br.Allow(); return err != nil })
	})
	b.Run("lib=loopctl-do", func(b *testing.B) {
		br := setupLoopctl(b)
		run(b, func() bool { _, err := breaker.Do(ctx, br, okCtx); return err != nil })
	})
	b.Run("lib=gobreaker-execute", func(b *testing.B) {
		cb := setupGobreakerExec(b)
		run(b, func() bool { _, err := cb.Execute(ok); return err != nil })
	})
	b.Run("lib=gobreaker-twostep", func(b *testing.B) {
		cb := setupGobreakerTwoStep(b)
		run(b, func() bool { _, err := cb.Allow(); return err != nil })
	})
	b.Run("lib=failsafe", func(b *testing.B) {
		cb := setupFailsafe(b)
		run(b, func() bool { return !cb.TryAcquirePermit() })
	})
	b.Run("lib=failsafe-executor", func(b *testing.B) {
		ex, _ := setupFailsafeExec(b)
		run(b, func() bool { _, err := ex.Get(ok); return err != nil })
	})
	if open {
		b.Run("lib=eapache", func(b *testing.B) {
			br := eapacheOpen(b)
			run(b, func() bool { return br.Run(okErr) != nil })
		})
	}
}

func BenchmarkOpen(b *testing.B)         { benchRefusals(b, true) }
func BenchmarkOpenParallel(b *testing.B) { benchRefusalsParallel(b, true, 1) }

// BenchmarkHalfOpenContention: every caller is refused because the single
// probe is in flight. The parallel variant runs 8 goroutines per P.
func BenchmarkHalfOpenContention(b *testing.B)         { benchRefusals(b, false) }
func BenchmarkHalfOpenContentionParallel(b *testing.B) { benchRefusalsParallel(b, false, 8) }
