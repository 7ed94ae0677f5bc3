package gateway

import (
	"cmp"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/pool"
)

// What the client sees of a pool (docs/GATEWAY.md §11.4) beyond a
// member's answer: a pool routed past for want of an admitted member is
// named pool/<name>=unavailable in x-loopctl-skipped, and when every entry
// left is such a pool and nothing was sent, §4's pool row answers.

// passUnavailable routes the request past the pool entry pe, which admits
// no member now, with no verdict, naming it in x-loopctl-skipped; e says
// when a member may be admitted again and whether the providers' say is
// why, for the pool row.
func (x *exchange) passUnavailable(tk ticket, pe *target, e *pool.UnavailableError) {
	tk.Skip()
	x.walk.skips.list = append(x.walk.skips.list, pe.ref+"=unavailable")
	x.walk.set(pe.ref, markPassed)
	x.walk.pools.unavailable(x.g.outByHand(pe.pool, e))
}

// passNever routes the request past the pool entry pe, no member of which
// could ever serve the request (§8.3: its wire, its parameters), naming
// the parameter as a chain entry's skip does; a body that does not decode
// for translation is named as concludeTranslated names it.
func (x *exchange) passNever(tk ticket, pe *target) {
	sk := x.walk.pools.skip
	param := sk.param
	var re *wire.RequestError
	if errors.As(sk.err, &re) {
		if x.walk.skips.why == "" && x.walk.skips.param == "" {
			x.walk.skips.why = re.Message
		}
		param = cmp.Or(re.Param, "the request")
	}
	x.skip(tk, pe, param)
}

// poolsUnavailable answers §4's pool row and reports true when it applies:
// nothing was sent (last nil, no attempt) and a pool was routed past for
// want of an admitted member. 429 rate_limit_error, code
// pool_rate_limited, when every member out is out for the providers' say
// (a hint, a quota, headroom); else 503 pool_unavailable (Messages: 529
// overloaded_error). Retry-After and retry-after-ms are the earliest time
// any member or entry may serve (also: an entry's, zero if none known),
// at least a second. It counts against no model.
func (x *exchange) poolsUnavailable(last error, also time.Time) bool {
	o := x.walk.pools.out
	if last != nil || o.n == 0 || x.walk.attempts > 0 {
		return false
	}
	now := x.g.now()
	at := o.retryAt
	for _, t := range [...]time.Time{x.walk.serveAt, also} {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	wait := time.Second
	if at.After(now) {
		wait = at.Sub(now)
	}
	h := x.w.Header()
	x.headers(h)
	retryHeaders(h, int64(wait))
	status, outcome := http.StatusServiceUnavailable, outcomeExhausted
	e := apiError{Type: "pool_unavailable", Code: "pool_unavailable"}
	switch {
	case o.limited:
		status, outcome, e.Type, e.Code = http.StatusTooManyRequests, outcomeRateLimit, "rate_limit_error", "pool_rate_limited"
	case x.in.endpoint.wire == wire.Messages:
		status = 529
	}
	e.Message = "model `" + x.in.rt.name + "`: no member of " + x.unavailablePools() + " may serve now"
	if o.limited {
		e.Message += ": every member out is rate limited, out of quota or out of headroom"
	}
	x.in.endpoint.writeError(x.w, status, e)
	x.done(outcome, status, e.Message)
	return true
}

// unavailablePools names the pools the request routed past as
// unavailable ("pool/a, pool/b").
func (x *exchange) unavailablePools() string {
	var names []string
	for _, s := range x.walk.skips.list {
		if ref, ok := strings.CutSuffix(s, "=unavailable"); ok {
			names = append(names, ref)
		}
	}
	return strings.Join(names, ", ")
}

// exhaustedAt is when the model breaker said, refusing the request's turn
// with err, that it may route again (zero: not said).
func exhaustedAt(err error, now time.Time) time.Time {
	var ee *fallback.ExhaustedError
	if errors.As(err, &ee) && ee.RetryIn > 0 {
		return now.Add(ee.RetryIn)
	}
	return time.Time{}
}
