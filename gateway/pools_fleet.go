package gateway

import (
	"time"
)

// Pools across a fleet (docs/GATEWAY.md §11.5, docs/FLEET.md): with
// Options.MemberBackend each member breaker is built on it under its name,
// member@<upstream>/<model>, so that every gateway on the same store shares
// it (its state, n and closedAt: a member tripped through one gateway is
// refused by every other with no request of its own); a reload that keeps
// the deployment reconfigures the same breaker, still attached to the same
// keys. With Options.MemberDisables a member disabled by hand is disabled
// for every gateway on the store, its end on the store's clock. What stays
// in the process, never through the store: the pools' figures (latency
// estimates, in-flight counts, headroom, the last-minute share), the member
// breakers' rate windows and slow counts, and the hedge and retry budgets.

// MemberDisableStore keeps the pool members disabled by hand where every
// gateway using it reads them (Options.MemberDisables), e.g. a fleet.Store's
// MemberDisables: a disable through one gateway takes the member out of
// every pool of every gateway on the store, until its end or an enable
// through any of them. Refs are deployments, upstream/model. Disabled is on
// every request's path and must answer from memory, with no round trip.
type MemberDisableStore interface {
	// Watch makes the store follow the disables of the members refs; the
	// gateway calls it with every member of its pools when it builds them
	// (at start and on each reload). It may make one round trip per ref.
	Watch(refs ...string)
	// Disable takes ref out of rotation until until (zero: until enabled),
	// for reason, by the admin key named by; a second disable replaces the
	// first, and an until already past enables ref.
	Disable(ref string, until time.Time, reason, by string)
	// Enable puts ref back in rotation.
	Enable(ref string)
	// Disabled reports whether ref is disabled at now, with its end (zero:
	// until enabled), its reason and the admin key's name.
	Disabled(ref string, now time.Time) (until time.Time, reason, by string, ok bool)
	// Any reports whether any member may be disabled: false lets every
	// request's admission skip Disabled (and its clock read). It must be as
	// cheap as an atomic load.
	Any() bool
}

// watchMembers has Options.MemberDisables follow every member of g's pools.
func (g *Gateway) watchMembers() {
	if g.opt.MemberDisables == nil || len(g.pools.members) == 0 {
		return
	}
	refs := make([]string, 0, len(g.pools.members))
	for _, pd := range g.pools.order {
		for _, m := range pd.members {
			refs = append(refs, m.ref)
		}
	}
	g.opt.MemberDisables.Watch(refs...)
}

// checkPools builds the pools of list on new in-process member breakers and
// disables, touching no shared state: a reload's check, before it builds
// them for good on the running gateway's.
func (g *Gateway) checkPools(list []Pool) error {
	be, off := g.opt.MemberBackend, g.opt.MemberDisables
	g.opt.MemberBackend, g.opt.MemberDisables = nil, nil
	defer func() { g.opt.MemberBackend, g.opt.MemberDisables = be, off }()
	return g.buildPools(list, nil)
}
