package retry

import (
	"errors"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"
)

// TestDoRandomHistories runs Do over random sequences of responses and
// random policies, and checks every call time, OnRetry and the outcome
// against a direct model of SEMANTICS section 4.
func TestDoRandomHistories(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 42))
	codes := []int{400, 404, 408, 422, 429, 429, 429, 500, 502, 503, 504, 529}
	for iter := 0; iter < 300; iter++ {
		p := Policy{
			MaxRetries:       rng.IntN(7) - 1, // -1 (none), 0 (default 3), 1..5
			RateLimitRetries: rng.IntN(5),     // 0 (default 3), 1..4
			BaseDelay:        time.Duration(1+rng.IntN(200)) * 8 * time.Millisecond,
			RateLimitDelay:   time.Duration(rng.IntN(3)) * 7 * time.Second, // 0: 5s
			Rand:             fixed(float64(rng.IntN(8)) / 8),              // exact in binary
		}
		p.MaxDelay = p.BaseDelay * time.Duration(1+rng.IntN(20))
		if rng.IntN(2) == 0 {
			p.MaxRateLimitDelay = time.Duration(1+rng.IntN(90)) * time.Second
		}
		var errs []error
		for n := rng.IntN(14); len(errs) < n; {
			code := codes[rng.IntN(len(codes))]
			var hint time.Duration
			if code == 429 && rng.IntN(2) == 0 {
				hint = time.Duration(rng.IntN(120)) * time.Second
			}
			errs = append(errs, st(code, hint))
		}
		errs = append(errs, nil)

		// The model.
		trBudget := max(orDefault(p.MaxRetries, 3), 0)
		rlBudget := orDefault(p.RateLimitRetries, 3)
		rlCap := orDefault(p.MaxRateLimitDelay, time.Minute)
		rlDefault := orDefault(p.RateLimitDelay, 5*time.Second)
		var (
			wantGaps  []time.Duration
			wantErr   error
			wantEsc   *EscalationError
			wantCalls int
			tr, rl    int
		)
	model:
		for i, e := range errs {
			wantCalls = i + 1
			if e == nil {
				break
			}
			se := e.(*StatusError)
			switch {
			case se.Code == 429:
				rl++
				if rl > rlBudget {
					wantEsc = &EscalationError{Attempts: rl, RetryAfter: se.RetryAfter, Err: e}
					break model
				}
				w := rlDefault
				if se.RetryAfter > 0 {
					w = se.RetryAfter
				}
				wantGaps = append(wantGaps, min(w, rlCap))
			case se.Code == 408 || se.Code >= 500:
				if tr >= trBudget {
					wantErr = e
					break model
				}
				d := p.BaseDelay
				for k := 0; k < tr; k++ {
					d = min(2*d, p.MaxDelay)
				}
				wantGaps = append(wantGaps, time.Duration(float64(d)*p.Rand()))
				tr++
			default:
				wantErr = e
				break model
			}
		}

		synctest.Test(t, func(t *testing.T) {
			o := run(t.Context(), p, errs...)
			fail := func(what string, got, want any) {
				t.Fatalf("seed %d iter %d policy %+v errs %v: %s = %v, want %v", seed, iter, p, errs, what, got, want)
			}
			if o.calls != wantCalls {
				fail("calls", o.calls, wantCalls)
			}
			if len(o.gaps) != len(wantGaps) {
				fail("gaps", o.gaps, wantGaps)
			}
			for i := range wantGaps {
				if o.gaps[i] != wantGaps[i] || o.delays[i] != wantGaps[i] || o.numbers[i] != i+1 {
					fail("gaps/OnRetry", []any{o.gaps, o.delays, o.numbers}, wantGaps)
				}
			}
			var esc *EscalationError
			switch {
			case wantEsc != nil:
				if !errors.As(o.err, &esc) || *esc != *wantEsc {
					fail("escalation", o.err, wantEsc)
				}
			case o.err != wantErr:
				fail("err", o.err, wantErr)
			}
		})
	}
}

// orDefault returns d if v is the zero value, else v.
func orDefault[T comparable](v, d T) T {
	var zero T
	if v == zero {
		return d
	}
	return v
}
