package bench

// The model breaker (fallback.Manager: Begin, then a success verdict) in the
// Primary and Fallback states, and the retry ladder's overhead on a call
// that succeeds at the first try.
//
// No peer has a model-fallback chain with a cooldown, so BenchmarkFallback
// measures loopctl alone (absolute numbers and allocations).
//
// Retry peers are configured like loopctl's default ladder (4 attempts,
// exponential backoff from 100ms capped at 10s, jittered) and, to give them
// their best case, every option or executor is built once outside the timed
// loop (per goroutine where the library's state is not safe to share);
// loopctl's retry.Policy is a plain value passed on every call.

import (
	"context"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"

	retrygo "github.com/avast/retry-go/v4"
	"github.com/cenkalti/backoff/v5"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
)

func newManager(tb testing.TB) *fallback.Manager {
	tb.Helper()
	m, err := fallback.New(fallback.Settings{
		Primary:         "primary",
		Chain:           []string{"backup"},
		TripThreshold:   threshold,
		RecoveryTimeout: time.Hour,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func managerIn(tb testing.TB, s fallback.State) *fallback.Manager {
	tb.Helper()
	m := newManager(tb)
	if s == fallback.Fallback {
		for range threshold {
			t, err := m.Begin()
			if err != nil {
				tb.Fatal(err)
			}
			t.Failure(fallback.Transient)
		}
	}
	return m
}

var fallbackStates = []fallback.State{fallback.Primary, fallback.Fallback}

func BenchmarkFallback(b *testing.B) {
	for _, s := range fallbackStates {
		b.Run("state="+s.String()+"/lib=loopctl", func(b *testing.B) {
			m := managerIn(b, s)
			b.ReportAllocs()
			for b.Loop() {
				t, err := m.Begin()
				if err != nil {
					b.Fatal(err)
				}
				t.Success()
			}
		})
	}
}

func BenchmarkFallbackParallel(b *testing.B) {
	for _, s := range fallbackStates {
		b.Run("state="+s.String()+"/lib=loopctl", func(b *testing.B) {
			m := managerIn(b, s)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					t, err := m.Begin()
					if err != nil {
						b.Error(err)
						return
					}
					t.Success()
				}
			})
		})
	}
}

// ---- retry ----

func backoffOptions() []backoff.RetryOption {
	return []backoff.RetryOption{
		backoff.WithBackOff(&backoff.ExponentialBackOff{
			InitialInterval:     100 * time.Millisecond,
			RandomizationFactor: 0.5,
			Multiplier:          2,
			MaxInterval:         10 * time.Second,
		}),
		backoff.WithMaxTries(4),
	}
}

func retrygoOptions(ctx context.Context) []retrygo.Option {
	return []retrygo.Option{
		retrygo.Attempts(4),
		retrygo.Delay(100 * time.Millisecond),
		retrygo.MaxDelay(10 * time.Second),
		retrygo.Context(ctx),
	}
}

func failsafeRetryExecutor(ctx context.Context) failsafe.Executor[int] {
	rp := retrypolicy.NewBuilder[int]().
		WithMaxRetries(3).
		WithBackoff(100*time.Millisecond, 10*time.Second).
		WithJitterFactor(0.5).
		Build()
	return failsafe.With[int](rp).WithContext(ctx)
}

// retryCases gives, per library, a factory (called once per goroutine) of
// the call to measure.
func retryCases(ctx context.Context) []struct {
	lib  string
	call func() func() (int, error)
} {
	return []struct {
		lib  string
		call func() func() (int, error)
	}{
		{"loopctl", func() func() (int, error) {
			var p retry.Policy
			return func() (int, error) { return retry.Do(ctx, p, okCtx) }
		}},
		{"backoff", func() func() (int, error) {
			opts := backoffOptions()
			return func() (int, error) { return backoff.Retry(ctx, ok, opts...) }
		}},
		{"retry-go", func() func() (int, error) {
			opts := retrygoOptions(ctx)
			return func() (int, error) { return retrygo.DoWithData(ok, opts...) }
		}},
		{"failsafe", func() func() (int, error) {
			ex := failsafeRetryExecutor(ctx)
			return func() (int, error) { return ex.Get(ok) }
		}},
	}
}

func BenchmarkRetryFirstTry(b *testing.B) {
	ctx := context.Background()
	// Direct calls (no closure) for the single-goroutine figures.
	b.Run("lib=loopctl", func(b *testing.B) {
		var p retry.Policy
		b.ReportAllocs()
		for b.Loop() {
			v, err := retry.Do(ctx, p, okCtx)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		}
	})
	b.Run("lib=backoff", func(b *testing.B) {
		opts := backoffOptions()
		b.ReportAllocs()
		for b.Loop() {
			v, err := backoff.Retry(ctx, ok, opts...)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		}
	})
	b.Run("lib=retry-go", func(b *testing.B) {
		opts := retrygoOptions(ctx)
		b.ReportAllocs()
		for b.Loop() {
			v, err := retrygo.DoWithData(ok, opts...)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		}
	})
	b.Run("lib=failsafe", func(b *testing.B) {
		ex := failsafeRetryExecutor(ctx)
		b.ReportAllocs()
		for b.Loop() {
			v, err := ex.Get(ok)
			if err != nil {
				b.Fatal(err)
			}
			sink = v
		}
	})
}

func BenchmarkRetryFirstTryParallel(b *testing.B) {
	ctx := context.Background()
	for _, c := range retryCases(ctx) {
		b.Run("lib="+c.lib, func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				call := c.call()
				for pb.Next() {
					if _, err := call(); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
