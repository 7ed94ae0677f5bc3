package gateway

import (
	"errors"
	"net/http"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

// The verdict of a failed attempt: its kind and hint, whether it failed the
// request slowly (so the next attempt fails over rather than waits), and
// when the chain may serve again (SEMANTICS §7).

// failure is the verdict of a failed attempt (SEMANTICS §3, §4): its kind
// (a quota, another rate limit, or transient), the provider's hint, and
// whether the attempt timed out, with how long it ran since start, so that
// the breaker dates it at the attempt's start (SEMANTICS §1, §8.4).
func failure(err error, start time.Time) fallback.Failure {
	return agent.FailureOf(streamLimit(err), time.Since(start))
}

// slow reports whether a failure counts as failing the request slowly
// (SEMANTICS §7): a timeout or a rate limit of any kind.
func slow(f fallback.Failure) bool { return f.Timeout || f.Kind != fallback.Transient }

// otherUsable reports whether a model other than model (and than those that
// failed this request slowly or that it routed past: the breaker's turn
// passes both) could serve the request's next attempt, within
// its attempt budget: then the ladder on model fails over rather than waits
// (SEMANTICS §7.1).
func (x *exchange) otherUsable(model string) bool {
	if x.walk.attempts >= x.in.budget || !x.in.endpoint.settles || x.in.pinned {
		return false
	}
	s := x.in.rt.mgr.Snapshot()
	p := x.in.rt.settings.Primary
	if p != model && !x.walk.is(p, markSlow|markPassed) && s.State != fallback.Fallback {
		return true
	}
	for _, e := range s.Chain {
		if e.Model != model && !x.walk.is(e.Model, markSlow|markPassed) && e.Available && !e.Failed {
			return true
		}
	}
	return false
}

// retryWait returns how long a client should wait before the chain may
// serve (SEMANTICS §7.3): the earliest of the times the models this request
// met said they may serve again (a rate limit without a hint: the ladder's
// default wait) and, with cooldown, the model breaker's cooldown end; 0 when
// none is known.
func (x *exchange) retryWait(now time.Time, cooldown bool) time.Duration {
	at := x.walk.serveAt
	if cooldown && x.in.rt != nil {
		if s := x.in.rt.mgr.Snapshot(); s.State != fallback.Primary && !s.CooldownEnds.IsZero() {
			if at.IsZero() || s.CooldownEnds.Before(at) {
				at = s.CooldownEnds
			}
		}
	}
	if at.IsZero() {
		return 0
	}
	return max(at.Sub(now), time.Millisecond)
}

// statusError is the ladder's error for an upstream's error answer, with
// its rate-limit kind and hint (SEMANTICS §4).
func statusError(ue *upstreamError, now time.Time) *retry.StatusError {
	typ, code, msg := errorFields(ue.body)
	hint := retry.HintFromHeader(ue.header, now)
	se := &retry.StatusError{Code: ue.status, Type: typ, ErrorCode: code, Hint: hint, Err: ue}
	se.Limit = retry.LimitFor(ue.status, typ, code, msg)
	if !hint.IsZero() {
		se.RetryAfter = hint.Sub(now)
	}
	return se
}

// streamLimit turns a stream's error event before content into the ladder's
// error with its kind: an overloaded_error is an Overload, a rate-limit
// error a Throttle (SEMANTICS §4, GATEWAY §6).
func streamLimit(err error) error {
	var se *streamError
	if !errors.As(err, &se) {
		return err
	}
	switch se.typ {
	case "overloaded_error", "overloaded":
		return &retry.StatusError{Code: 529, Type: se.typ, Limit: retry.Overload, Err: err}
	case "rate_limit_error", "rate_limit_exceeded":
		return &retry.StatusError{Code: http.StatusTooManyRequests, Type: se.typ, Limit: retry.Throttle, Err: err}
	}
	return err
}

// timeoutError marks an attempt cut by one of the gateway's own timeouts
// (first_byte, request, idle) as a timeout (net.Error), for the ladder and
// the verdict (SEMANTICS §1, §7.1).
type timeoutError struct{ err error }

func (e *timeoutError) Error() string   { return e.err.Error() }
func (e *timeoutError) Unwrap() error   { return e.err }
func (e *timeoutError) Timeout() bool   { return true }
func (e *timeoutError) Temporary() bool { return true }
