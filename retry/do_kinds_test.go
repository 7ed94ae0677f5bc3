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

// Tests of the rev-3 rules of Do: kinds, hints, Failover, RateLimitWait and
// the deadline.

func quota(code int) *StatusError {
	return &StatusError{Code: code, ErrorCode: "insufficient_quota", Err: errors.New("quota")}
}

func TestDoKinds(t *testing.T) {
	overloaded := &StatusError{Code: 529, Type: "overloaded_error"}
	timeout := fmt.Errorf("read: %w", context.DeadlineExceeded)
	tests := []struct {
		name      string
		p         Policy
		errs      []error
		wantCalls int
		wantGaps  []time.Duration
		wantLimit Limit // of the escalation; NoLimit: the last error unchanged (or success)
		wantErr   error
	}{
		{"quota 429 escalates at once", Policy{}, []error{quota(429), nil}, 1, nil, Quota, nil},
		{"quota 403 escalates at once", Policy{}, []error{quota(403), nil}, 1, nil, Quota, nil},
		{"quota after throttles", Policy{}, []error{st(429, time.Second), quota(429), nil}, 2, []time.Duration{time.Second}, Quota, nil},
		{"overload: transient backoff", Policy{Rand: fixed(0.5)}, []error{overloaded, overloaded, nil}, 3, []time.Duration{50 * ms, 100 * ms}, NoLimit, nil},
		{"overload: transient budget", Policy{Rand: fixed(0.5), MaxRetries: 1}, []error{overloaded, overloaded, nil}, 2, []time.Duration{50 * ms}, NoLimit, overloaded},
		{"failover: throttle at once", Policy{Failover: true}, []error{st(429, 30*time.Second), nil}, 1, nil, Throttle, nil},
		{"failover: overload at once", Policy{Failover: true}, []error{overloaded, nil}, 1, nil, Overload, nil},
		{"failover: timeout at once", Policy{Failover: true}, []error{timeout, nil}, 1, nil, NoLimit, timeout},
		{"failover: net timeout at once", Policy{Failover: true}, []error{timeoutErr{true}, nil}, 1, nil, NoLimit, timeoutErr{true}},
		{"failover: fast errors keep their retries", Policy{Failover: true, Rand: fixed(0.5)},
			[]error{st(500, 0), errors.New("connection refused"), st(502, 0), nil}, 4, []time.Duration{50 * ms, 100 * ms, 200 * ms}, NoLimit, nil},
		{"no failover: timeout retried", Policy{Rand: fixed(0.5)}, []error{timeout, nil}, 2, []time.Duration{50 * ms}, NoLimit, nil},
		{"RateLimitWait: the wait that passes it escalates", Policy{RateLimitWait: 8 * time.Second},
			[]error{st(429, 5*time.Second), st(429, 3*time.Second), st(429, time.Second), nil}, 3, []time.Duration{5 * time.Second, 3 * time.Second}, Throttle, nil},
		{"RateLimitWait counts capped waits", Policy{RateLimitWait: 60 * time.Second, MaxRateLimitDelay: 20 * time.Second},
			[]error{st(429, time.Hour), st(429, time.Hour), st(429, time.Hour), nil}, 4, []time.Duration{20 * time.Second, 20 * time.Second, 20 * time.Second}, NoLimit, nil},
		{"RateLimitWait ignores transient waits", Policy{RateLimitWait: time.Second, BaseDelay: 2 * time.Second, MaxDelay: 2 * time.Second, Rand: fixed(0.5)},
			[]error{st(503, 0), st(429, time.Second), nil}, 3, []time.Duration{time.Second, time.Second}, NoLimit, nil},
		{"unrecoverable quota: permanent", Policy{}, []error{Unrecoverable(quota(429)), nil}, 1, nil, NoLimit, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				o := run(t.Context(), tt.p, tt.errs...)
				eq(t, "calls", o.calls, tt.wantCalls)
				eq(t, "gaps", o.gaps, tt.wantGaps)
				esc, isEsc := errors.AsType[*EscalationError](o.err)
				switch {
				case tt.wantLimit != NoLimit:
					if !isEsc || esc.Limit != tt.wantLimit || esc.Err != tt.errs[tt.wantCalls-1] {
						t.Fatalf("err = %v, want an escalation of kind %v wrapping the last error", o.err, tt.wantLimit)
					}
				case tt.wantErr != nil:
					if o.err != tt.wantErr {
						t.Fatalf("err = %v, want %v unchanged", o.err, tt.wantErr)
					}
				case tt.name == "unrecoverable quota: permanent":
					if o.err != tt.errs[0] {
						t.Fatalf("err = %v, want it unchanged", o.err)
					}
				case o.err != nil:
					t.Fatalf("err = %v, want success", o.err)
				}
			})
		})
	}
}

func TestDoEscalationCarriesKindAndHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hint := time.Now().Add(10 * time.Minute)
		q := &StatusError{Code: 429, ErrorCode: "insufficient_quota", Limit: Quota, Hint: hint, RetryAfter: 10 * time.Minute}
		_, err := Do(t.Context(), Policy{}, func(context.Context) (int, error) { return 0, q })
		esc, ok := errors.AsType[*EscalationError](err)
		if !ok {
			t.Fatalf("err = %v, want an escalation", err)
		}
		if esc.Attempts != 1 || esc.Limit != Quota || !esc.Hint.Equal(hint) || esc.RetryAfter != 10*time.Minute {
			t.Errorf("escalation %+v, want 1 attempt, quota, hint %v, 10m", esc, hint)
		}
		if l, h := LimitOf(err); l != Quota || !h.Equal(hint) {
			t.Errorf("LimitOf = %v, %v", l, h)
		}
		if !errors.Is(err, ErrRateLimitEscalation) || Classify(err) != RateLimited {
			t.Error("a quota escalation is a rate-limit escalation")
		}
	})
}

func TestDoHintAsTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A StatusError with a Hint and no RetryAfter waits until the hint.
		se := &StatusError{Code: 429, Hint: time.Now().Add(7 * time.Second)}
		o := run(t.Context(), Policy{}, se, nil)
		eq(t, "gaps", o.gaps, []time.Duration{7 * time.Second})
		// A hint in the past counts as none: the default delay.
		se = &StatusError{Code: 429, Hint: time.Now().Add(-time.Second)}
		o = run(t.Context(), Policy{}, se, nil)
		eq(t, "gaps", o.gaps, []time.Duration{5 * time.Second})
	})
}

// TestDoDeadlineRateLimit: a rate-limit wait that would end after the
// deadline is not started; Do returns the 429 itself (not ctx.Err()), and
// LimitOf still reports the throttle.
func TestDoDeadlineRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		last := st(429, 30*time.Second)
		o := run(ctx, Policy{}, last, nil)
		if o.err != last {
			t.Fatalf("err = %v, want the 429 unchanged", o.err)
		}
		eq(t, "calls", o.calls, 1)
		eq(t, "elapsed", o.elapsed, time.Duration(0))
		if l, _ := LimitOf(o.err); l != Throttle {
			t.Errorf("LimitOf = %v, want throttle", l)
		}
	})
}

func TestPolicyValidateRateLimitWait(t *testing.T) {
	err := Policy{RateLimitWait: -time.Second}.Validate()
	if !errors.Is(err, ErrInvalidPolicy) || err == nil || !strings.Contains(err.Error(), "RateLimitWait") {
		t.Errorf("Validate = %v, want an error naming RateLimitWait", err)
	}
}
