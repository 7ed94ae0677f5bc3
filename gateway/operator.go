package gateway

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/retry"
)

// outcomeOperator: the breaker refused the request because an operator
// took its models out of rotation (a hold, disables), not because they
// failed.
const outcomeOperator = "operator"

// refusedTurn answers a turn the breaker refused with err and reports true,
// or reports false when the request should end with its last attempt's
// error, last: an operator's refusal is answered as such, a refusal before
// any attempt failed as FallbackExhausted.
func (x *exchange) refusedTurn(err, last error) bool {
	if x.byOperator(err, last) {
		return true
	}
	if x.poolsUnavailable(last, exhaustedAt(err, x.g.now())) {
		return true
	}
	x.g.m.call(x.in.rt.name, metrics.Refused)
	if x.walk.attempts == 0 || last == nil {
		x.exhausted(err)
		return true
	}
	return false
}

// byOperator answers a request the breaker refused with err when an
// operator's acts are why nothing is left to route to: the primary held
// with no chain, or every chain entry disabled by hand (GATEWAY §9.2). With
// nothing sent (last nil) it is the §4 row "chain spent": 503
// fallback_exhausted (Messages: 529 overloaded_error, §6), Retry-After at
// the earliest end an operator or the breaker set, and a message naming who
// did what, why and until when, never that something failed. With an
// attempt sent, the answer is the row of its last failure, last, with the
// operator's acts named beside the upstream's last answer. It reports false
// for every other refusal.
func (x *exchange) byOperator(err, last error) bool {
	var ee *fallback.ExhaustedError
	if x.in.rt == nil || !errors.As(err, &ee) {
		return false
	}
	now := x.g.now()
	s := x.in.rt.mgr.Snapshot()
	msg, at, ok := operatorCause(x.in.rt.name, x.in.rt.settings.Primary, s, now)
	if !ok {
		return false
	}
	x.g.m.call(x.in.rt.name, metrics.Refused)
	if last != nil {
		x.failAs(last, msg+"; the last upstream answer: "+clientText(last))
		return true
	}
	wait := max(at.Sub(now), time.Millisecond)
	if at.IsZero() {
		wait = time.Second
	}
	h := x.w.Header()
	x.headers(h)
	retryHeaders(h, int64(wait))
	status := http.StatusServiceUnavailable
	if x.in.endpoint.wire == wire.Messages {
		status = 529
	}
	e := apiError{Message: msg, Type: "fallback_exhausted", Code: "fallback_exhausted"}
	x.in.endpoint.writeError(x.w, status, e)
	x.done(outcomeOperator, status, e.Message)
	return true
}

// failLast answers a request whose attempts all failed, the last with
// last: when operators disabled every chain entry, the message names their
// acts beside the upstream's last answer (the status stays last's row of
// GATEWAY §4); otherwise it is fail's.
func (x *exchange) failLast(last error) {
	if x.in.rt != nil && len(x.in.rt.settings.Chain) > 0 {
		s := x.in.rt.mgr.Snapshot()
		all := true
		for _, e := range s.Chain {
			all = all && !e.Available
		}
		if msg, _, ok := operatorCause(x.in.rt.name, x.in.rt.settings.Primary, s, x.g.now()); ok && all {
			x.failAs(last, msg+"; the last upstream answer: "+clientText(last))
			return
		}
	}
	x.fail(last)
}

// operatorCause says why model's breaker (primary primary, snapshot s) routes nowhere when
// operators' acts are the cause, and the earliest time a model may serve
// again (zero: none is set); ok is false when a failure is the cause.
func operatorCause(model, primary string, s fallback.Snapshot, now time.Time) (msg string, at time.Time, ok bool) {
	held := !s.HoldUntil.IsZero() && now.Before(s.HoldUntil)
	if !held && len(s.Chain) == 0 {
		return "", time.Time{}, false
	}
	var b strings.Builder
	b.WriteString("model `" + model + "` is out of rotation")
	earliest := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	if held {
		why, who := unsign(s.HoldReason)
		b.WriteString(": its primary " + primary + " is held by an operator" + byWhom(who, why, s.HoldUntil))
	} else if s.State == fallback.Fallback {
		b.WriteString(": its primary " + primary + "'s breaker is open until " + s.CooldownEnds.UTC().Format(time.RFC3339))
	}
	if s.State == fallback.Fallback {
		earliest(s.CooldownEnds)
	}
	for _, e := range s.Chain {
		if e.Available {
			if e.Failed {
				return "", time.Time{}, false // a backup failed: the chain is exhausted by failures
			}
			continue
		}
		why, who := unsign(e.DisabledReason)
		b.WriteString("; " + e.Model + " disabled by an operator" + byWhom(who, why, e.DisabledUntil))
		earliest(e.DisabledUntil)
	}
	return b.String(), at, true
}

// byWhom is " (alice, until T: why)" with what is known of an operator's
// act.
func byWhom(who, why string, until time.Time) string {
	var parts []string
	if who != "" {
		parts = append(parts, who)
	}
	if !until.IsZero() {
		parts = append(parts, "until "+until.UTC().Format(time.RFC3339))
	}
	s := strings.Join(parts, ", ")
	if why != "" {
		if s != "" {
			s += ": "
		}
		s += why
	}
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// clientText is an attempt's error as a client reads it: the upstream's
// answer in the gateway's words ("upstream answered 500 (type …)"), with
// no package's prefix ("retry: HTTP 500 …", "fallback: …").
func clientText(err error) string {
	var ue *upstreamError
	if errors.As(err, &ue) {
		s := ue.Error()
		if errors.Is(err, retry.ErrRateLimitEscalation) {
			s = "rate limited past the wait allowed; " + s
		}
		return s
	}
	s := err.Error()
	for _, p := range []string{"retry: ", "fallback: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}
