package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"
)

// bubbleStart is the time at which every synctest bubble starts.
var bubbleStart = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// answer is one scripted failure and what the model knows about it.
type answer struct {
	err       error
	kind      Limit
	after     time.Duration // StatusError.RetryAfter
	hint      time.Time     // StatusError.Hint
	permanent bool          // a 4xx without a kind, or an Unrecoverable mark
	timeout   bool
}

// randomAnswer draws one failure.
func randomAnswer(rng *rand.Rand) answer {
	var a answer
	hint := func(se *StatusError) {
		switch rng.IntN(3) {
		case 0:
			se.RetryAfter = time.Duration(rng.IntN(120)) * time.Second
			a.after = se.RetryAfter
		case 1: // a hint as a time only, relative to the bubble's clock
			se.Hint = bubbleStart.Add(time.Duration(rng.IntN(200)) * time.Second)
			a.hint = se.Hint
		}
	}
	switch n := rng.IntN(18); {
	case n < 4: // throttle
		se := st(429, 0)
		hint(se)
		a.err, a.kind = se, Throttle
	case n < 6: // quota, by code or by an explicit kind
		se := &StatusError{Code: []int{429, 403}[rng.IntN(2)], ErrorCode: "insufficient_quota", Err: errors.New("quota")}
		if rng.IntN(2) == 0 {
			se.ErrorCode, se.Limit = "", Quota
		}
		hint(se)
		a.err, a.kind = se, Quota
	case n < 8: // overload
		se := []*StatusError{st(529, 0), {Code: 503, Message: "Overloaded"}, {Code: 429, Type: "overloaded_error"}}[rng.IntN(3)]
		a.err, a.kind = se, Overload
	case n < 10: // timeouts
		a.err, a.timeout = []error{fmt.Errorf("read: %w", context.DeadlineExceeded), timeoutErr{true}}[rng.IntN(2)], true
	case n < 11:
		a.err, a.permanent = Unrecoverable(st(429, 0)), true
	default:
		code := []int{400, 404, 408, 422, 500, 502, 503, 504}[rng.IntN(8)]
		a.err, a.permanent = st(code, 0), code != 408 && code < 500
	}
	return a
}

// want is what the model predicts.
type want struct {
	gaps  []time.Duration
	err   error
	esc   *EscalationError
	calls int
}

// model runs SEMANTICS §4 and §7.1 (rev 3) directly over the answers.
func model(p Policy, answers []answer, deadline time.Duration) want {
	trBudget := max(orDefault(p.MaxRetries, 3), 0)
	rlBudget := orDefault(p.RateLimitRetries, 3)
	rlCap := orDefault(p.MaxRateLimitDelay, time.Minute)
	rlDefault := orDefault(p.RateLimitDelay, 5*time.Second)
	var (
		w              want
		tr, rl         int
		elapsed, spent time.Duration
	)
	for i, a := range answers {
		w.calls = i + 1
		if a.err == nil {
			return w
		}
		after := a.after
		if after == 0 && !a.hint.IsZero() {
			after = max(a.hint.Sub(bubbleStart.Add(elapsed)), 0)
		}
		escalate := func() want {
			hint := a.hint
			if hint.IsZero() && after > 0 {
				hint = bubbleStart.Add(elapsed + after)
			}
			w.esc = &EscalationError{Attempts: rl, RetryAfter: after, Err: a.err, Limit: a.kind, Hint: hint}
			return w
		}
		var gap time.Duration
		rateLimited := false
		switch {
		case a.permanent:
			w.err = a.err
			return w
		case a.kind == Quota || (a.kind != NoLimit && p.Failover):
			rl++
			return escalate()
		case a.kind == Throttle:
			rl++
			if rl > rlBudget {
				return escalate()
			}
			gap = rlDefault
			if after > 0 {
				gap = after
			}
			gap = min(gap, rlCap)
			if p.RateLimitWait > 0 && spent+gap > p.RateLimitWait {
				return escalate()
			}
			rateLimited = true
		case a.timeout && p.Failover:
			w.err = a.err
			return w
		default: // transient, overload included
			if tr >= trBudget {
				w.err = a.err
				return w
			}
			d := p.BaseDelay
			for k := 0; k < tr; k++ {
				d = min(2*d, p.MaxDelay)
			}
			gap = time.Duration(float64(d) * p.Rand())
			tr++
		}
		if deadline > 0 && deadline-elapsed <= gap {
			w.err = a.err
			return w
		}
		if rateLimited {
			spent += gap
		}
		elapsed += gap
		w.gaps = append(w.gaps, gap)
	}
	return w
}

// TestDoRandomHistories runs Do over random sequences of answers (every
// kind, hints as waits and as times, timeouts, permanent errors), random
// policies (Failover, RateLimitWait) and random deadlines, and checks every
// call time, OnRetry and the outcome against the model.
func TestDoRandomHistories(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 42))
	for iter := 0; iter < 1000; iter++ {
		p := Policy{
			MaxRetries:       rng.IntN(7) - 1, // -1 (none), 0 (default 3), 1..5
			RateLimitRetries: rng.IntN(5),     // 0 (default 3), 1..4
			BaseDelay:        time.Duration(1+rng.IntN(200)) * 8 * time.Millisecond,
			RateLimitDelay:   time.Duration(rng.IntN(3)) * 7 * time.Second, // 0: 5s
			Rand:             fixed(float64(rng.IntN(8)) / 8),              // exact in binary
			Failover:         rng.IntN(3) == 0,
		}
		p.MaxDelay = p.BaseDelay * time.Duration(1+rng.IntN(20))
		if rng.IntN(2) == 0 {
			p.MaxRateLimitDelay = time.Duration(1+rng.IntN(90)) * time.Second
		}
		if rng.IntN(2) == 0 {
			p.RateLimitWait = time.Duration(1+rng.IntN(120)) * time.Second
		}
		var deadline time.Duration
		if rng.IntN(2) == 0 {
			deadline = time.Duration(1+rng.IntN(180)) * time.Second
		}
		var answers []answer
		for n := rng.IntN(14); len(answers) < n; {
			answers = append(answers, randomAnswer(rng))
		}
		answers = append(answers, answer{})
		errs := make([]error, len(answers))
		for i, a := range answers {
			errs[i] = a.err
		}
		w := model(p, answers, deadline)

		synctest.Test(t, func(t *testing.T) {
			ctx := t.Context()
			if deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, deadline)
				defer cancel()
			}
			o := run(ctx, p, errs...)
			fail := func(what string, got, want any) {
				t.Fatalf("seed %d iter %d policy %+v deadline %v errs %v: %s = %v, want %v", seed, iter, p, deadline, errs, what, got, want)
			}
			if o.calls != w.calls {
				fail("calls", o.calls, w.calls)
			}
			if len(o.gaps) != len(w.gaps) {
				fail("gaps", o.gaps, w.gaps)
			}
			for i := range w.gaps {
				if o.gaps[i] != w.gaps[i] || o.delays[i] != w.gaps[i] || o.numbers[i] != i+1 {
					fail("gaps/OnRetry", []any{o.gaps, o.delays, o.numbers}, w.gaps)
				}
			}
			if w.esc == nil {
				if o.err != w.err {
					fail("err", o.err, w.err)
				}
				return
			}
			esc, ok := errors.AsType[*EscalationError](o.err)
			if !ok || esc.Attempts != w.esc.Attempts || esc.RetryAfter != w.esc.RetryAfter || esc.Err != w.esc.Err ||
				esc.Limit != w.esc.Limit || !esc.Hint.Equal(w.esc.Hint) {
				fail("escalation", fmt.Sprintf("%+v", o.err), fmt.Sprintf("%+v", w.esc))
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
