package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Do calls fn until it succeeds or the ladder gives up, and returns fn's
// result. On failure it returns the zero T and:
//
//   - an error matching [ErrInvalidPolicy], naming the field, if p is
//     invalid (see [Policy.Validate]); fn is not called;
//   - ctx.Err() if ctx has ended before the first attempt;
//   - a Permanent error (see [Classify]) unchanged, at once;
//   - the last error unchanged when the transient budget (MaxRetries) is
//     spent, so errors.Is/As on it work;
//   - an [*EscalationError] for the (RateLimitRetries+1)-th rate-limited
//     response;
//   - the last error unchanged, at once, when the next wait would reach
//     ctx's deadline (time.Until(deadline) <= wait): Do neither waits nor
//     calls again;
//   - an error satisfying both errors.Is(err, ctx.Err()) and errors.Is/As
//     on the last error when ctx ends before or during a wait (the last
//     error itself if it already matches ctx.Err()).
//
// Transient retry a (0-based, counting transient retries only) waits
// p.Delay(a, p.Rand()). A rate-limited retry waits the [*StatusError]'s
// RetryAfter when positive, else RateLimitDelay, capped at
// MaxRateLimitDelay, with no jitter. The two budgets are independent.
// p.OnRetry is called once before each wait. Every wait is a timer raced
// against ctx.Done(), and ctx is checked before every attempt.
//
// A first-try success does not allocate. Do is safe for concurrent use when
// p.Rand, p.OnRetry and fn are.
func Do[T any](ctx context.Context, p Policy, fn func(context.Context) (T, error)) (T, error) {
	var zero T
	if err := p.Validate(); err != nil {
		return zero, err
	}
	var (
		transient   int // transient retries taken
		rateLimited int // rate-limited responses received
		attempt     int // attempts made
		last        error
	)
	for {
		if cerr := ctx.Err(); cerr != nil {
			if last == nil {
				return zero, cerr
			}
			return zero, ctxError(cerr, last)
		}
		v, err := fn(ctx)
		attempt++
		if err == nil {
			return v, nil
		}
		last = err

		var wait time.Duration
		switch Classify(err) {
		case Permanent:
			return zero, err
		case RateLimited:
			rateLimited++
			hint := retryAfterOf(err)
			if rateLimited > p.rateLimitRetries() {
				return zero, &EscalationError{Attempts: rateLimited, RetryAfter: hint, Err: err}
			}
			wait = p.rateLimitDelay(hint)
		default: // Transient
			if transient >= p.maxRetries() {
				return zero, err
			}
			wait = p.Delay(transient, p.draw())
			transient++
		}

		if cerr := ctx.Err(); cerr != nil {
			return zero, ctxError(cerr, err)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			return zero, err
		}
		if p.OnRetry != nil {
			p.OnRetry(Attempt{Number: attempt, Err: err, Delay: wait})
		}
		if cerr := sleep(ctx, wait); cerr != nil {
			return zero, ctxError(cerr, err)
		}
	}
}

// draw returns the next random draw.
func (p Policy) draw() float64 {
	if p.Rand != nil {
		return p.Rand()
	}
	return rand.Float64()
}

// retryAfterOf returns the Retry-After hint carried by err: that of the
// first *StatusError in its chain, else that of an *EscalationError, else 0.
func retryAfterOf(err error) time.Duration {
	if se, ok := errors.AsType[*StatusError](err); ok {
		return se.RetryAfter
	}
	if esc, ok := errors.AsType[*EscalationError](err); ok {
		return esc.RetryAfter
	}
	return 0
}

// sleep waits for d or until ctx ends, whichever comes first, and returns
// ctx.Err() in the second case. The timer is stopped on return.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ctxError reports that the context ended (cerr) after the attempt that
// failed with last; the result matches both.
func ctxError(cerr, last error) error {
	if errors.Is(last, cerr) {
		return last
	}
	return fmt.Errorf("retry: %w (last error: %w)", cerr, last)
}
