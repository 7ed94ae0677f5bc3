package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

// SEMANTICS §7 in the gateway: a request's deadline, failing over rather
// than waiting, and the verdict of a failed attempt with its kind and hint.

// DeadlineMargin is the least time a request's deadline keeps before the
// client's own timeout (SEMANTICS §7.3: 5% of it, at least this much).
const DeadlineMargin = 100 * time.Millisecond

// deadlineContext is a request's context stating the request's deadline
// (SEMANTICS §7.3) without a timer of its own: the retry ladder reads it
// (it never waits past it), each attempt's clock cancels its attempt at it
// (with context.DeadlineExceeded, as a context with that deadline would),
// and the attempt loop starts no attempt past it. Done and Err are the
// request's: they do not end at the deadline.
type deadlineContext struct {
	context.Context
	deadline time.Time
}

// Deadline returns the earlier of the request's deadline and its parent's.
func (c *deadlineContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// ended reports whether the request has ended: its context, or its
// deadline passed.
func (c *deadlineContext) ended() bool {
	d, _ := c.Deadline()
	return c.Err() != nil || !time.Now().Before(d)
}

// deadline returns the request's deadline: the earliest of timeouts.total
// and the client's own timeout when the request states it
// (X-Stainless-Timeout, in seconds, as the official SDKs send it, or
// x-loopctl-timeout, in seconds or as a Go duration), less the margin.
func (g *Gateway) deadline(r *http.Request, start time.Time) time.Time {
	d := g.total
	for _, h := range [...]string{"X-Stainless-Timeout", "X-Loopctl-Timeout"} {
		if c, ok := clientTimeout(r.Header.Get(h)); ok && c < d {
			d = c
		}
	}
	margin := max(d/20, DeadlineMargin)
	if margin >= d {
		margin = d / 2
	}
	return start.Add(d - margin)
}

// clientTimeout parses a client's timeout header: seconds (decimals
// allowed) or a Go duration; false for a missing, unparsable or
// non-positive value.
func clientTimeout(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f <= 0 || f > 1e9 {
			return 0, false
		}
		return time.Duration(f * float64(time.Second)), true
	}
	d, err := time.ParseDuration(v)
	return d, err == nil && d > 0
}

// failure is the verdict of a failed attempt (SEMANTICS §3, §4): its kind
// (a quota, another rate limit, or transient), the provider's hint, and
// whether the attempt timed out, with how long it ran since start, so that
// the breaker dates it at the attempt's start (SEMANTICS §1, §8.4).
func failure(err error, start time.Time) fallback.Failure {
	lim, hint := retry.LimitOf(streamLimit(err))
	f := fallback.Failure{Hint: hint}
	switch lim {
	case retry.Quota:
		f.Kind = fallback.Quota
	case retry.Throttle, retry.Overload:
		f.Kind = fallback.RateLimit
	default:
		if f.Timeout = retry.IsTimeout(err); f.Timeout {
			f.Elapsed = time.Since(start)
		}
	}
	return f
}

// slow reports whether a failure counts as failing the request slowly
// (SEMANTICS §7): a timeout or a rate limit of any kind.
func slow(f fallback.Failure) bool { return f.Timeout || f.Kind != fallback.Transient }

// otherUsable reports whether a model other than model (and than those that
// failed this request slowly) could serve the request's next attempt, within
// its attempt budget: then the ladder on model fails over rather than waits
// (SEMANTICS §7.1).
func (x *exchange) otherUsable(model string) bool {
	if x.attempts >= x.budget || !x.endpoint.settles || x.pinned {
		return false
	}
	s := x.rt.mgr.Snapshot()
	p := x.rt.settings.Primary
	if p != model && !x.slow[p] && s.State != fallback.Fallback {
		return true
	}
	for _, e := range s.Chain {
		if e.Model != model && !x.slow[e.Model] && e.Available && !e.Failed {
			return true
		}
	}
	return false
}

// noteFailure remembers a failed attempt's model when it failed slowly, and
// the earliest time a model of the chain said it may serve again.
func (x *exchange) noteFailure(model string, f fallback.Failure) {
	if !slow(f) {
		return
	}
	if x.slow == nil {
		x.slow = make(map[string]bool, 2)
	}
	x.slow[model] = true
	if f.Hint.IsZero() && f.Kind != fallback.Transient {
		f.Hint = x.g.now().Add(retry.DefaultRateLimitDelay)
	}
	if !f.Hint.IsZero() && (x.serveAt.IsZero() || f.Hint.Before(x.serveAt)) {
		x.serveAt = f.Hint
	}
}

// retryWait returns how long a client should wait before the chain may
// serve (SEMANTICS §7.3): the earliest of the times the models this request
// met said they may serve again (a rate limit without a hint: the ladder's
// default wait) and, with cooldown, the model breaker's cooldown end; 0 when
// none is known.
func (x *exchange) retryWait(now time.Time, cooldown bool) time.Duration {
	at := x.serveAt
	if cooldown && x.rt != nil {
		if s := x.rt.mgr.Snapshot(); s.State != fallback.Primary && !s.CooldownEnds.IsZero() {
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

// errorFields reads an error body's type, code and message (OpenAI's and
// Anthropic's shapes; Google's status stands in for a missing type). The
// message is used only to classify, never shown to a client.
func errorFields(body []byte) (typ, code, msg string) {
	var e struct {
		Error struct {
			Type    any    `json:"type"`
			Code    any    `json:"code"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &e) != nil {
		return "", "", ""
	}
	typ, code = token(e.Error.Type), token(e.Error.Code)
	if typ == "" {
		typ = token(e.Error.Status)
	}
	return typ, code, e.Error.Message
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

// attemptContext bounds an attempt: by the request's deadline, and a probe
// by its lease (on the breaker's clock).
func (x *exchange) attemptContext(ctx context.Context, turn ticket) (context.Context, context.CancelFunc) {
	if dl, ok := turn.turn.Deadline(); ok {
		return context.WithTimeout(ctx, dl.Sub(x.g.now()))
	}
	return ctx, func() {}
}
