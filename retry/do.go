package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/loopctl/loopctl-go/internal/ctxsleep"
)

// Do calls fn until it succeeds or the ladder gives up, and returns fn's
// result. On failure it returns the zero T and:
//
//   - an error matching [ErrInvalidPolicy], naming the field, if p is
//     invalid (see [Policy.Validate]); fn is not called;
//   - ctx.Err() if ctx has ended before the first attempt;
//   - a Permanent error (see [Classify]) unchanged, at once, unless it is a
//     Quota answer (a 403 quota: see below);
//   - the last error unchanged when the transient budget (MaxRetries) is
//     spent, so errors.Is/As on it work ([LimitOf] still reports an
//     Overload's kind);
//   - an [*EscalationError] carrying the answer's kind and hint for: the
//     (RateLimitRetries+1)-th Throttle; a Quota answer, at once (never
//     retried); a rate-limit wait that would take the total waited on rate
//     limits past p.RateLimitWait (when set); and, with p.Failover, the
//     first rate-limited answer of any kind, at once;
//   - with p.Failover, the first timeout ([IsTimeout]) unchanged, at once;
//   - the last error unchanged, at once, when the next wait would reach
//     ctx's deadline (time.Until(deadline) <= wait): Do neither waits nor
//     calls again, and the caller acts on the real failure (not on
//     ctx.Err());
//   - an error satisfying both errors.Is(err, ctx.Err()) and errors.Is/As
//     on the last error when ctx ends before or during a wait (the last
//     error itself if it already matches ctx.Err()).
//
// The kind of an answer is [LimitOf]'s. Transient retry a (0-based,
// counting transient retries only) waits p.Delay(a, p.Rand()); Overload
// answers take this rung. A Throttle's retry waits the [*StatusError]'s
// RetryAfter when positive, else the time until its Hint, else
// RateLimitDelay, capped at MaxRateLimitDelay, with no jitter. The two
// budgets are independent. p.OnRetry is called once before each wait.
// Every wait is a timer raced against ctx.Done(), and ctx is checked before
// every attempt.
//
// A first-try success does not allocate. Do is safe for concurrent use when
// p.Rand, p.OnRetry and fn are.
func Do[T any](ctx context.Context, p Policy, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := p.Validate(); err != nil {
		return zero, err
	}
	var (
		l    ladder
		last error
	)
	for attempt := 1; ; attempt++ {
		if cerr := ctx.Err(); cerr != nil {
			if last == nil {
				return zero, cerr
			}
			return zero, ctxError(cerr, last)
		}
		v, err := fn(ctx)
		if err == nil {
			return v, nil
		}
		last = err
		wait, stop := l.next(&p, err)
		if stop != nil {
			return zero, stop
		}
		if cerr := ctx.Err(); cerr != nil {
			return zero, ctxError(cerr, err)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			return zero, err
		}
		if p.Budget != nil && !p.Budget() {
			return zero, err // the retry budget is spent (SEMANTICS §8.3)
		}
		l.commit()
		if p.OnRetry != nil {
			p.OnRetry(Attempt{Number: attempt, Err: err, Delay: wait})
		}
		if cerr := ctxsleep.Sleep(ctx, wait); cerr != nil {
			return zero, ctxError(cerr, err)
		}
	}
}

// ladder is Do's bookkeeping across attempts.
type ladder struct {
	transient int           // transient retries taken
	limited   int           // rate-limited answers on the rate-limit budget
	waited    time.Duration // total rate-limit wait taken
	pending   time.Duration // the rate-limit wait next returned, until commit
}

// next decides what follows the failed attempt err: a wait before the next
// attempt, or (stop != nil) the error Do returns at once.
func (l *ladder) next(p *Policy, err error) (wait time.Duration, stop error) {
	l.pending = 0
	if permanentMark(err) {
		return 0, err
	}
	kind, hint := LimitOf(err)
	switch {
	case kind == Quota || (kind != NoLimit && p.Failover):
		l.limited++
		return 0, l.escalate(kind, hint, err)
	case kind == Throttle:
		l.limited++
		if l.limited > p.rateLimitRetries() {
			return 0, l.escalate(kind, hint, err)
		}
		wait = p.rateLimitDelay(waitOf(err, hint))
		if p.RateLimitWait > 0 && l.waited+wait > p.RateLimitWait {
			return 0, l.escalate(kind, hint, err)
		}
		l.pending = wait
		return wait, nil
	case kind == NoLimit && Classify(err) == Permanent:
		return 0, err
	case kind == NoLimit && p.Failover && IsTimeout(err):
		return 0, err
	}
	// Transient, Overload included.
	if l.transient >= p.maxRetries() {
		return 0, err
	}
	wait = p.Delay(l.transient, p.draw())
	l.transient++
	return wait, nil
}

// commit records that the wait next returned is taken.
func (l *ladder) commit() {
	l.waited += l.pending
	l.pending = 0
}

// escalate returns the escalation for the rate-limited answer err of the
// given kind and hint. Without a hint, the hint is when err's RetryAfter
// ends, from now.
func (l *ladder) escalate(kind Limit, hint time.Time, err error) error {
	after := waitOf(err, hint)
	if hint.IsZero() && after > 0 {
		hint = time.Now().Add(after)
	}
	return &EscalationError{Attempts: l.limited, RetryAfter: after, Err: err, Limit: kind, Hint: hint}
}

// permanentMark reports whether err is never retried whatever its kind: it
// is marked [Unrecoverable] or is a cancellation.
func permanentMark(err error) bool {
	if _, ok := errors.AsType[*unrecoverableError](err); ok {
		return true
	}
	return errors.Is(err, context.Canceled)
}

// draw returns the next random draw.
func (p Policy) draw() float64 {
	if p.Rand != nil {
		return p.Rand()
	}
	return rand.Float64()
}

// waitOf returns the hint carried by err as a wait: the RetryAfter of the
// first *StatusError in its chain, else that of an *EscalationError, else
// (or when that is 0) the time until hint; never negative.
func waitOf(err error, hint time.Time) time.Duration {
	var d time.Duration
	if se, ok := errors.AsType[*StatusError](err); ok {
		d = se.RetryAfter
	} else if esc, ok := errors.AsType[*EscalationError](err); ok {
		d = esc.RetryAfter
	}
	if d <= 0 && !hint.IsZero() {
		d = time.Until(hint)
	}
	return max(d, 0)
}

// ctxError reports that the context ended (cerr) after the attempt that
// failed with last; the result matches both.
func ctxError(cerr, last error) error {
	if errors.Is(last, cerr) {
		return last
	}
	return fmt.Errorf("retry: %w (last error: %w)", cerr, last)
}
