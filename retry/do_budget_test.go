package retry

import (
	"testing"
	"testing/synctest"
	"time"
)

// SEMANTICS §8.3: a retry spends a token of the budget; with none, no retry
// (the last error, at once); the first attempt never asks; a rate-limited
// wait asks too.
func TestDoBudget(t *testing.T) {
	for _, c := range []struct {
		name   string
		tokens int
		errs   []error
		calls  int
		asked  int
		failed bool
	}{
		{"first-try success asks nothing", 0, nil, 1, 0, false},
		{"no token: one attempt", 0, []error{st(503, 0), nil}, 1, 1, true},
		{"one token: one retry", 1, []error{st(503, 0), st(500, 0), nil}, 2, 2, true},
		{"enough tokens", 5, []error{st(503, 0), st(500, 0), nil}, 3, 2, false},
		{"a rate-limited wait spends", 1, []error{st(429, time.Second), st(429, time.Second), nil}, 2, 2, true},
		{"a permanent error asks nothing", 5, []error{st(400, 0)}, 1, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tokens, asked := c.tokens, 0
				var rec recorder
				p := Policy{Rand: fixed(0.5), OnRetry: rec.on, Budget: func() bool {
					asked++
					if tokens < 1 {
						return false
					}
					tokens--
					return true
				}}
				s := newScript(c.errs...)
				_, err := Do(t.Context(), p, s.fn)
				eq(t, "calls", len(s.calls), c.calls)
				eq(t, "budget asked", asked, c.asked)
				eq(t, "OnRetry calls", len(rec.attempts), c.calls-1)
				if (err != nil) != c.failed {
					t.Fatalf("err = %v, want failed %v", err, c.failed)
				}
				if c.failed && len(c.errs) > 0 && err != c.errs[c.calls-1] {
					t.Fatalf("err = %v, want the last attempt's error %v", err, c.errs[c.calls-1])
				}
			})
		})
	}
}
