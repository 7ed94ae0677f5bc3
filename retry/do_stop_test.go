package retry

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// Tests of everything that stops the ladder early: permanent errors,
// cancellation, the context's deadline and invalid policies.

func TestDoPermanent(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"400", st(400, 0)},
		{"401", st(401, 0)},
		{"404 with hint", st(404, time.Second)},
		{"422", st(422, 0)},
		{"canceled from fn", context.Canceled},
		{"wrapped canceled", fmt.Errorf("tool: %w", context.Canceled)},
		{"unrecoverable", Unrecoverable(errors.New("bad request body"))},
		{"unrecoverable 503", Unrecoverable(st(503, 0))},
		{"unrecoverable 429", Unrecoverable(st(429, 0))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := run(t.Context(), Policy{}, tt.err, nil)
				if o.err != tt.err {
					t.Errorf("err = %v, want %v unchanged", o.err, tt.err)
				}
				eq(t, "calls", o.calls, 1)
				eq(t, "OnRetry calls", len(o.numbers), 0)
				eq(t, "elapsed", o.elapsed, time.Duration(0))
			})
		})
	}
	// errors.As still sees through Unrecoverable.
	synctest.Test(t, func(t *testing.T) {
		o := run(t.Context(), Policy{}, Unrecoverable(st(503, 0)))
		var se *StatusError
		if !errors.As(o.err, &se) || se.Code != 503 {
			t.Errorf("errors.As through Unrecoverable failed: %v", o.err)
		}
	})
}

func TestDoCancelDuringWait(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
	}{{"transient", st(503, 0)}, {"rate-limited", st(429, 30*time.Second)}} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				time.AfterFunc(10*ms, cancel)
				p := Policy{BaseDelay: time.Second, Rand: fixed(0.5)}
				o := run(ctx, p, tt.err, nil)
				if !errors.Is(o.err, context.Canceled) {
					t.Errorf("err = %v, want context.Canceled", o.err)
				}
				if !errors.Is(o.err, tt.err) {
					t.Errorf("err = %v does not wrap the last error", o.err)
				}
				eq(t, "calls", o.calls, 1)
				eq(t, "elapsed", o.elapsed, 10*ms) // promptly, not after the wait
				eq(t, "OnRetry calls", len(o.numbers), 1)
			})
		})
	}
}

func TestDoCancelledBeforeStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		o := run(ctx, Policy{})
		if o.err != context.Canceled {
			t.Errorf("err = %v, want context.Canceled", o.err)
		}
		eq(t, "calls", o.calls, 0)
	})
}

func TestDoCancelledDuringCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		calls := 0
		last := st(503, 0)
		var rec recorder
		_, err := Do(ctx, Policy{OnRetry: rec.on}, func(context.Context) (int, error) {
			calls++
			cancel() // the caller gives up while the call is in flight
			return 0, last
		})
		if !errors.Is(err, context.Canceled) || !errors.Is(err, last) {
			t.Errorf("err = %v, want context.Canceled wrapping the last error", err)
		}
		if !strings.Contains(err.Error(), "503") {
			t.Errorf("err = %q does not mention the last error", err)
		}
		eq(t, "calls", calls, 1)
		eq(t, "OnRetry calls", len(rec.attempts), 0) // no wait will happen
	})
}

func TestDoDeadline(t *testing.T) {
	tests := []struct {
		name      string
		timeout   time.Duration
		p         Policy
		errs      []error
		wantCalls int
		wantAt    time.Duration // elapsed when Do returns
	}{
		{"rate-limit wait past the deadline", time.Second, Policy{}, []error{st(429, 2*time.Second), nil}, 1, 0},
		{"wait exactly to the deadline", 100 * ms, Policy{}, []error{st(429, 100*ms), nil}, 1, 0},
		{"wait just short of the deadline", 100 * ms, Policy{}, []error{st(429, 99*ms), nil}, 2, 99 * ms},
		// Waits of 150, 300, 600ms: the third would end at 1050ms > 1s.
		{"after some waits", time.Second, Policy{BaseDelay: 300 * ms, Rand: fixed(0.5)},
			[]error{st(500, 0), st(500, 0), st(500, 0), nil}, 3, 450 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
				defer cancel()
				o := run(ctx, tt.p, tt.errs...)
				eq(t, "calls", o.calls, tt.wantCalls)
				eq(t, "elapsed", o.elapsed, tt.wantAt)
				eq(t, "OnRetry calls", len(o.numbers), tt.wantCalls-1)
				if tt.errs[tt.wantCalls-1] == nil {
					eq(t, "err", o.err, nil)
				} else if o.err != tt.errs[tt.wantCalls-1] {
					t.Errorf("err = %v, want the last error unchanged", o.err)
				}
			})
		})
	}
}

// TestDoDeadlineErrorFromFn: a call that runs into the deadline itself
// returns context.DeadlineExceeded, which Do passes on without waiting.
func TestDoDeadlineErrorFromFn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		calls := 0
		_, err := Do(ctx, Policy{}, func(ctx context.Context) (int, error) {
			calls++
			<-ctx.Done()
			return 0, fmt.Errorf("call: %w", ctx.Err())
		})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want DeadlineExceeded", err)
		}
		eq(t, "calls", calls, 1)
	})
}

func TestDoInvalidPolicy(t *testing.T) {
	tests := []struct {
		p     Policy
		field string
	}{
		{Policy{BaseDelay: -1}, "BaseDelay"},
		{Policy{MaxDelay: -time.Second}, "MaxDelay"},
		{Policy{RateLimitDelay: -1}, "RateLimitDelay"},
		{Policy{MaxRateLimitDelay: -1}, "MaxRateLimitDelay"},
		{Policy{RateLimitRetries: -1}, "RateLimitRetries"},
		{Policy{JitterFactor: -0.1}, "JitterFactor"},
		{Policy{JitterFactor: 1.5}, "JitterFactor"},
		{Policy{JitterFactor: nan()}, "JitterFactor"},
		{Policy{Jitter: 2}, "Jitter"},
		{Policy{Jitter: -1}, "Jitter"},
		{Policy{BaseDelay: 20 * time.Second}, "BaseDelay"},                       // above the default MaxDelay
		{Policy{MaxDelay: 50 * ms}, "BaseDelay"},                                 // below the default BaseDelay
		{Policy{BaseDelay: 2 * time.Second, MaxDelay: time.Second}, "BaseDelay"}, // both set
	}
	for _, tt := range tests {
		called := false
		_, err := Do(context.Background(), tt.p, func(context.Context) (int, error) {
			called = true
			return 1, nil
		})
		if err == nil || !errors.Is(err, ErrInvalidPolicy) || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%+v: err = %v, want an invalid-policy error naming %s", tt.p, err, tt.field)
		}
		if called {
			t.Errorf("%+v: fn was called", tt.p)
		}
		if verr := tt.p.Validate(); verr == nil || verr.Error() != err.Error() {
			t.Errorf("Validate() = %v, want %v", verr, err)
		}
	}
	valid := []Policy{
		{},
		{MaxRetries: -1},
		{MaxRetries: 1 << 30},
		{JitterFactor: 1, Jitter: ProportionalJitter},
		{JitterFactor: 0.5}, // ignored under full jitter, still in range
		{BaseDelay: time.Second, MaxDelay: time.Second},
		{BaseDelay: 10 * time.Second},
		{MaxDelay: 100 * ms},
		{RateLimitDelay: time.Hour}, // capped at MaxRateLimitDelay, not invalid
	}
	for _, p := range valid {
		if err := p.Validate(); err != nil {
			t.Errorf("%+v: Validate() = %v, want nil", p, err)
		}
	}
}

func nan() float64 { z := 0.0; return z / z }

func TestDoFirstTrySuccess(t *testing.T) {
	v, err := Do(context.Background(), Policy{OnRetry: func(Attempt) { t.Error("OnRetry called") }},
		func(context.Context) (string, error) { return "ok", nil })
	if v != "ok" || err != nil {
		t.Errorf("Do = (%q, %v)", v, err)
	}
}
