package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
)

// A stateful Responses request (previous_response_id) whose response a
// pool member made goes to that member, before every other rule
// (docs/GATEWAY.md §11.2): the pins store the member's upstream/model, and
// pool.Pin starts the attempt on it, so that it counts on the member's
// breaker and figures, is refused with Retry-After while that breaker
// refuses (§6), and is never refused for headroom. It is never failed over:
// the id means nothing to another deployment.

// memberPin is the member a pinned request goes to: member i of pool pd.
type memberPin struct {
	pd *pooled
	i  int
}

// pinnedMember returns the pool member that is deployment ref, if a pool
// lists it: the first of the route rt's pools, else of the gateway's.
func (g *Gateway) pinnedMember(rt *route, ref string) *memberPin {
	if g.memberBreaker(ref) == nil {
		return nil
	}
	pools := g.pools.order
	if rt != nil {
		pools = append(g.poolsOf(rt.name), pools...)
	}
	for _, pd := range pools {
		for i, m := range pd.members {
			if m.ref == ref {
				return &memberPin{pd: pd, i: i}
			}
		}
	}
	return nil
}

// runPinned serves a request pinned to a pool member under the request's
// context ctx: one attempt on that member, with no failover; its verdict
// settles the member's attempt (and the pool's figures) only.
func (x *exchange) runPinned(ctx context.Context, body []byte, stream bool) {
	pn := x.in.pin
	pd, mt := pn.pd, pn.pd.member(pn.i)
	pr := x.walk.pools.of(pd)
	pt := &pr.turn
	*pt = poolTurn{pd: pd, req: &pr.r, now: x.g.now, m: x.g.m}
	x.walk.last = mt
	a, err := pd.p.Pin(x.g.now(), pt.req, pn.i, x.poolNeed(pd, body))
	if err != nil {
		x.refusePinned(err, mt)
		return
	}
	x.walk.countMember(1)
	o := x.newTry(ticket{model: mt.ref}, mt, a)
	x.runTry(ctx, o, body, stream)
	defer o.cancel()
	x.walk.upstream += time.Since(o.start)
	x.memberHeadroom(a, answerHeader(o.res, o.err))
	if o.err == nil {
		pt.open, o.tk.pool = a, pt
		x.relay(o.tk, mt, o.res)
		return
	}
	x.memberFailed(o.tk, a, mt, o.err, o.start)
	pd.p.End(x.g.now(), pt.req)
	if x.conclude(o.tk, mt, nil, o.err, o.start) != answered {
		x.failLast(o.err)
	}
}

// refusePinned answers a pinned request whose member's breaker refused it
// with err: 503 fallback_exhausted (Messages: 529) with Retry-After until
// the member may be probed, as a pinned chain entry's open breaker is
// (§6).
func (x *exchange) refusePinned(err error, mt *target) {
	var oe *breaker.OpenError
	wait := time.Second
	if errors.As(err, &oe) && oe.RetryIn > 0 {
		wait = oe.RetryIn
	}
	now := x.g.now()
	x.exhausted(&fallback.ExhaustedError{Primary: mt.ref, State: fallback.Fallback, ProbeAt: now.Add(wait), RetryIn: wait})
}
