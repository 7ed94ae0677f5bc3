package retry

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"testing/synctest"
	"time"
)

// script is a fn for Do that fails with errs[i] on call i (nil: success)
// and records the (virtual) time of every call.
type script struct {
	errs  []error
	calls []time.Time
	start time.Time
}

func newScript(errs ...error) *script { return &script{errs: errs, start: time.Now()} }

func (s *script) fn(ctx context.Context) (int, error) {
	i := len(s.calls)
	s.calls = append(s.calls, time.Now())
	if i < len(s.errs) && s.errs[i] != nil {
		return -1, s.errs[i]
	}
	return i + 1, nil
}

// gaps returns the virtual time between consecutive calls.
func (s *script) gaps() []time.Duration {
	var out []time.Duration
	for i := 1; i < len(s.calls); i++ {
		out = append(out, s.calls[i].Sub(s.calls[i-1]))
	}
	return out
}

// recorder collects OnRetry calls.
type recorder struct{ attempts []Attempt }

func (r *recorder) on(a Attempt) { r.attempts = append(r.attempts, a) }

func (r *recorder) numbers() []int {
	var out []int
	for _, a := range r.attempts {
		out = append(out, a.Number)
	}
	return out
}

func (r *recorder) delays() []time.Duration {
	var out []time.Duration
	for _, a := range r.attempts {
		out = append(out, a.Delay)
	}
	return out
}

func fixed(r float64) func() float64 { return func() float64 { return r } }

func st(code int, retryAfter time.Duration) *StatusError {
	return &StatusError{Code: code, RetryAfter: retryAfter, Err: fmt.Errorf("response %d", code)}
}

const ms = time.Millisecond

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// run runs Do with p (OnRetry recorded) on a script inside a synctest bubble.
type outcome struct {
	v       int
	err     error
	calls   int
	gaps    []time.Duration
	numbers []int
	delays  []time.Duration
	elapsed time.Duration
}

func run(ctx context.Context, p Policy, errs ...error) outcome {
	s := newScript(errs...)
	var rec recorder
	p.OnRetry = rec.on
	v, err := Do(ctx, p, s.fn)
	return outcome{v, err, len(s.calls), s.gaps(), rec.numbers(), rec.delays(), time.Since(s.start)}
}

func TestDoTransient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := Policy{Rand: fixed(0.5)}
		e := []error{st(503, 0), st(500, 0), st(529, 0)}
		o := run(t.Context(), p, e[0], e[1], e[2], nil)
		eq(t, "err", o.err, nil)
		eq(t, "value", o.v, 4)
		eq(t, "gaps", o.gaps, []time.Duration{50 * ms, 100 * ms, 200 * ms})
		eq(t, "OnRetry delays", o.delays, o.gaps)
		eq(t, "OnRetry numbers", o.numbers, []int{1, 2, 3})
	})
}

func TestDoTransientBudgetSpent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		last := st(502, 0)
		var rec recorder
		s := newScript(st(500, 0), st(503, 0), st(504, 0), last, nil)
		v, err := Do(t.Context(), Policy{Rand: fixed(0.5), OnRetry: rec.on}, s.fn)
		if err != last {
			t.Fatalf("err = %v, want the last error unchanged", err)
		}
		var se *StatusError
		if !errors.As(err, &se) || se.Code != 502 {
			t.Error("errors.As on the returned error fails")
		}
		eq(t, "value", v, 0)
		eq(t, "calls", len(s.calls), 4)
		eq(t, "gaps", s.gaps(), []time.Duration{50 * ms, 100 * ms, 200 * ms})
		eq(t, "OnRetry numbers", rec.numbers(), []int{1, 2, 3})
		// The attempt errors are passed to OnRetry in order.
		for i, a := range rec.attempts {
			if a.Err != s.errs[i] {
				t.Errorf("OnRetry[%d].Err = %v, want %v", i, a.Err, s.errs[i])
			}
		}
	})
}

func TestDoMaxRetries(t *testing.T) {
	tests := []struct {
		name       string
		maxRetries int
		wantCalls  int
	}{
		{"negative: no retries", -1, 1},
		{"very negative", -100, 1},
		{"one", 1, 2},
		{"default", 0, 4},
		{"five", 5, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				errs := make([]error, 10)
				for i := range errs {
					errs[i] = st(500, 0)
				}
				o := run(t.Context(), Policy{MaxRetries: tt.maxRetries, Rand: fixed(0.5)}, errs...)
				eq(t, "calls", o.calls, tt.wantCalls)
				eq(t, "OnRetry calls", len(o.numbers), tt.wantCalls-1)
				if o.err != errs[tt.wantCalls-1] {
					t.Errorf("err = %v, want the last error", o.err)
				}
			})
		})
	}
}

func TestDoDefaultRand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := run(t.Context(), Policy{MaxRetries: 8}, st(500, 0), st(500, 0), st(500, 0), st(500, 0), st(500, 0), st(500, 0), st(500, 0), st(500, 0))
		eq(t, "err", o.err, nil)
		eq(t, "OnRetry delays", o.delays, o.gaps)
		for i, d := range o.delays {
			if limit := min(100*ms<<i, 10*time.Second); d < 0 || d >= limit {
				t.Errorf("retry %d waited %v, want in [0, %v)", i, d, limit)
			}
		}
	})
}

func TestDoZeroDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := run(t.Context(), Policy{Rand: fixed(0)}, st(500, 0), st(500, 0), nil)
		eq(t, "err", o.err, nil)
		eq(t, "gaps", o.gaps, []time.Duration{0, 0})
		eq(t, "OnRetry delays", o.delays, []time.Duration{0, 0})
	})
}

func TestDoProportional(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := Policy{Jitter: ProportionalJitter, JitterFactor: 0.5, Rand: fixed(0.75), BaseDelay: time.Second, MaxDelay: 2 * time.Second}
		o := run(t.Context(), p, st(500, 0), st(500, 0), st(500, 0), nil)
		eq(t, "gaps", o.gaps, []time.Duration{1250 * ms, 2500 * ms, 2500 * ms})
	})
}

func TestDoRateLimitWaits(t *testing.T) {
	tests := []struct {
		name string
		p    Policy
		hint time.Duration
		want time.Duration
	}{
		{"Retry-After honoured", Policy{}, 7 * time.Second, 7 * time.Second},
		{"sub-second hint", Policy{}, 250 * ms, 250 * ms},
		{"hint capped at 60s", Policy{}, 5 * time.Minute, time.Minute},
		{"hint exactly 60s", Policy{}, time.Minute, time.Minute},
		{"no hint: 5s", Policy{}, 0, 5 * time.Second},
		{"negative hint: no hint", Policy{}, -time.Second, 5 * time.Second},
		{"custom cap", Policy{MaxRateLimitDelay: 2 * time.Second}, 3 * time.Second, 2 * time.Second},
		{"custom default", Policy{RateLimitDelay: time.Second}, 0, time.Second},
		{"default capped too", Policy{RateLimitDelay: 90 * time.Second}, 0, time.Minute},
		{"no jitter", Policy{Rand: fixed(0), Jitter: ProportionalJitter}, 3 * time.Second, 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := run(t.Context(), tt.p, st(429, tt.hint), nil)
				eq(t, "err", o.err, nil)
				eq(t, "gaps", o.gaps, []time.Duration{tt.want})
				eq(t, "OnRetry delays", o.delays, []time.Duration{tt.want})
				eq(t, "OnRetry numbers", o.numbers, []int{1})
			})
		})
	}
}

func TestDoEscalation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		last := st(429, 2*time.Minute)
		o := run(t.Context(), Policy{}, st(429, 0), st(429, 3*time.Second), st(429, 2*time.Minute), last, nil)
		eq(t, "calls", o.calls, 4)
		eq(t, "gaps", o.gaps, []time.Duration{5 * time.Second, 3 * time.Second, time.Minute})
		eq(t, "OnRetry numbers", o.numbers, []int{1, 2, 3})
		if !errors.Is(o.err, ErrRateLimitEscalation) {
			t.Fatalf("err = %v, want an escalation", o.err)
		}
		var esc *EscalationError
		if !errors.As(o.err, &esc) {
			t.Fatalf("err = %T, want *EscalationError", o.err)
		}
		eq(t, "Attempts", esc.Attempts, 4)
		eq(t, "RetryAfter (uncapped)", esc.RetryAfter, 2*time.Minute)
		if esc.Err != last || errors.Unwrap(o.err) != last {
			t.Errorf("Err = %v, want the last error", esc.Err)
		}
		var se *StatusError
		if !errors.As(o.err, &se) || se != last {
			t.Error("errors.As does not find the last StatusError")
		}
		eq(t, "elapsed", o.elapsed, 5*time.Second+3*time.Second+time.Minute)
	})
}

func TestDoEscalationCustomBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := run(t.Context(), Policy{RateLimitRetries: 1}, st(429, 0), st(429, 0), nil)
		var esc *EscalationError
		if !errors.As(o.err, &esc) {
			t.Fatalf("err = %v, want *EscalationError", o.err)
		}
		eq(t, "Attempts", esc.Attempts, 2)
		eq(t, "RetryAfter", esc.RetryAfter, time.Duration(0))
		eq(t, "calls", o.calls, 2)
	})
}

func TestDoSeparateBudgets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Three of each are retried; the fourth 500 ends the ladder with
		// the 500 itself, although 429s came in between.
		last := st(500, 0)
		o := run(t.Context(), Policy{Rand: fixed(0.5)},
			st(500, 0), st(429, 0), st(503, 0), st(429, time.Second), st(504, 0), st(429, 0), last, nil)
		if o.err != last {
			t.Fatalf("err = %v, want the fourth transient error", o.err)
		}
		eq(t, "calls", o.calls, 7)
		eq(t, "gaps", o.gaps, []time.Duration{50 * ms, 5 * time.Second, 100 * ms, time.Second, 200 * ms, 5 * time.Second})
		eq(t, "OnRetry numbers", o.numbers, []int{1, 2, 3, 4, 5, 6})

		// And the fourth 429 escalates although 500s came in between.
		o = run(t.Context(), Policy{Rand: fixed(0.5)},
			st(429, 0), st(500, 0), st(429, 0), st(500, 0), st(429, 0), st(500, 0), st(429, 9*time.Minute), nil)
		var esc *EscalationError
		if !errors.As(o.err, &esc) {
			t.Fatalf("err = %v, want *EscalationError", o.err)
		}
		eq(t, "Attempts", esc.Attempts, 4)
		eq(t, "RetryAfter", esc.RetryAfter, 9*time.Minute)
		eq(t, "calls", o.calls, 7)
		eq(t, "gaps", o.gaps, []time.Duration{5 * time.Second, 50 * ms, 5 * time.Second, 100 * ms, 5 * time.Second, 200 * ms})
	})
}
