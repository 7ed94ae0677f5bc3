package gateway

import (
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// Routing past a pool before a ticket is drawn (SEMANTICS §9.3 rule 6):
// Begin routes past a pool with no admitted member as it routes past a
// model that failed the turn slowly (§7), drawing no ticket and no probe
// slot, so a pool whose members are all open never takes the model's
// probe from a request another entry can serve, and its breaker and
// observer see nothing of it.

// passPools routes the request's next attempt past each pool entry the
// breaker would route it to while that pool admits no member: the turn's
// memory (fallback.Attempts.RoutePast) passes it with no ticket, and the
// pool is named pool/<name>=unavailable (GATEWAY §11.4). A pool no member
// of which could ever serve the request, one the walk has already met,
// and count_tokens (which draws no ticket) are left to pick. It reports
// whether it routed past a pool and left no model usable: then a ticket
// could only go back to a model passed (the probe, it may be), so the
// caller answers without one when §4's pool row applies.
func (x *exchange) passPools(body []byte) bool {
	rt := x.in.rt
	if !rt.pooled || !x.in.endpoint.settles {
		return false
	}
	passed := false
	for range len(rt.targets) { // each pass routes past one more model
		model, ok := x.walk.att.NextModel(rt.mgr)
		if !ok {
			return passed
		}
		pe := rt.targets[model]
		if pe == nil || pe.pool == nil || x.walk.is(pe.ref, markSlow|markPassed|markFailed) || !x.poolCanEver(pe.pool, body) {
			return false
		}
		pd := pe.pool
		need := x.poolNeed(pd, body)
		now := x.g.now()
		r := x.walk.pools.request(pd)
		if pd.p.Admits(now, r, need) || x.walk.att.RoutePast(rt.mgr, model) != nil {
			return false
		}
		x.noteUnavailable(pe, pd.p.Unavailable(now, r, need))
		passed = true
	}
	return passed && !x.walk.att.Usable(rt.mgr)
}

// cooldownEnd is when the route's breaker may route a turn again after a
// trip or a hold, when that is still to come (zero otherwise), for the
// pool row's Retry-After when no ticket was drawn.
func (x *exchange) cooldownEnd() time.Time {
	s := x.in.rt.mgr.Snapshot()
	if s.State == fallback.Primary || !s.CooldownEnds.After(x.g.now()) {
		return time.Time{}
	}
	return s.CooldownEnds
}
