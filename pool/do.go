package pool

import (
	"context"
	"errors"
	"time"
)

// VerdictError marks a member's error with the verdict [Do] settles the
// member's attempt with; an error without one is a [Attempt.Failure]. Make
// one with [RateLimitedError], [QuotaError] or [NoVerdictError].
type VerdictError struct {
	Err  error
	kind outcome
	// Hint is the provider's "call again at" for a rate limit or a quota;
	// zero: none.
	Hint time.Time
}

// Error returns the wrapped error's text.
func (e *VerdictError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *VerdictError) Unwrap() error { return e.Err }

// RateLimitedError marks err as a throttle or an overload, with the
// provider's hint (zero: none): [Attempt.RateLimited].
func RateLimitedError(err error, hint time.Time) error {
	return &VerdictError{Err: err, kind: rateLimited, Hint: hint}
}

// QuotaError marks err as an exhausted quota, with the provider's hint
// (zero: none): [Attempt.QuotaExhausted].
func QuotaError(err error, hint time.Time) error {
	return &VerdictError{Err: err, kind: quotaExhausted, Hint: hint}
}

// NoVerdictError marks err as an answer with no verdict against the member
// (a malformed request): [Attempt.NoVerdict]. Do moves on to the next member.
func NoVerdictError(err error) error { return &VerdictError{Err: err, kind: noVerdict} }

// Do runs one pool attempt for r: it chooses a member ([Pool.Choose]), calls
// fn with the attempt under a context that ends at the attempt's lease
// ([Attempt.Deadline]), and settles the attempt on fn's error: nil is a
// success, a [*VerdictError] its verdict, an error matching
// context.DeadlineExceeded (or any error once the attempt's context has
// ended) a timeout, one matching context.Canceled (or any error once ctx is
// cancelled) a cancel, and anything else a failure. On a failure or an answer
// with no verdict it moves on to the next member at once, until one serves,
// none is admitted, or ctx ends (a cancel, or its deadline: no time is left
// for another member); it returns fn's last value and error (or
// the [*UnavailableError] when no member was admitted) with the pool
// attempt's [Result]. Every attempt is settled in a defer: if fn panics, its
// attempt is settled as a failure and the panic continues. fn may report the
// first content and the headroom through the attempt. Do reads the clock of
// Settings.Now, and does not hedge (a caller that hedges uses [Pool.Hedge]).
func Do[T any](ctx context.Context, p *Pool, r *Request, n Need, fn func(context.Context, Attempt) (T, error)) (T, Result, error) {
	var (
		v   T
		err error
	)
	for {
		a, cerr := p.Choose(p.now(), r, n)
		if cerr != nil {
			if err == nil {
				err = cerr
			}
			break
		}
		var done bool
		v, err, done = runAttempt(ctx, p, a, fn)
		if done {
			break
		}
	}
	return v, p.End(p.now(), r), err
}

// runAttempt runs fn for attempt a and settles it; done says the pool
// attempt is over (served, or the caller gave up).
func runAttempt[T any](ctx context.Context, p *Pool, a Attempt, fn func(context.Context, Attempt) (T, error)) (v T, err error, done bool) {
	start := p.now()
	settled := false
	defer func() {
		if !settled {
			a.Failure(p.now()) // fn panicked: the panic continues
		}
	}()
	actx, cancel := context.WithTimeout(ctx, a.Deadline().Sub(start)) // the lease, on the pool's clock
	defer cancel()
	v, err = fn(actx, a)
	settled = true
	now := p.now()
	var ve *VerdictError
	// The caller's own context ending ends the pool attempt: a cancel carries
	// no verdict, a deadline leaves no time for another member.
	done = ctx.Err() != nil
	switch {
	case err == nil:
		a.Success(now)
		return v, nil, true
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		a.Cancel(now)
		return v, err, true
	case errors.As(err, &ve):
		ve.settle(now, a)
	case errors.Is(err, context.DeadlineExceeded) || actx.Err() != nil:
		a.TimeoutAfter(now, now.Sub(start))
	default:
		a.Failure(now)
	}
	return v, err, done
}

// settle settles a with e's verdict.
func (e *VerdictError) settle(now time.Time, a Attempt) {
	switch e.kind {
	case rateLimited:
		a.RateLimited(now, e.Hint)
	case quotaExhausted:
		a.QuotaExhausted(now, e.Hint)
	default:
		a.NoVerdict(now)
	}
}
