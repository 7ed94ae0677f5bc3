package gateway

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

// memberDisables are the pool members an operator took out of rotation
// (POST /admin/breakers/{model} with member, docs/GATEWAY.md §11.5), by
// deployment (upstream/model): a disabled member is not admitted by any
// pool that lists it, until its end (zero: until enabled). An end is
// clock-driven and lazy: the first read at or after it ends the disable,
// with no timer. The set is a type of its own, with these few methods, so
// that a fleet can keep it in its store (the disables with their TTL on
// the store's clock) behind the same methods. Safe for concurrent use; the
// zero value is ready.
type memberDisables struct {
	mu sync.Mutex
	on map[string]memberDisable
	// n is len(on), read without the lock: with no disable (the usual
	// case) the walk's admission takes no lock and reads no clock.
	n      atomic.Int32
	shared MemberDisableStore // nil: the set above, this process only (pools_fleet.go)
}

// memberDisable is one disable: its end (zero: until enabled), the reason
// given and the admin key's name.
type memberDisable struct {
	until      time.Time
	reason, by string
}

// disable takes the member ref out of rotation until until (zero: until
// enabled), for reason, by the admin key named by; a second disable
// replaces the first.
func (d *memberDisables) disable(ref string, until time.Time, reason, by string) {
	if d.shared != nil {
		d.shared.Disable(ref, until, reason, by)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.on == nil {
		d.on = map[string]memberDisable{}
	}
	d.on[ref] = memberDisable{until: until, reason: reason, by: by}
	d.n.Store(int32(len(d.on)))
}

// enable puts the member ref back in rotation (a member not disabled: no
// change).
func (d *memberDisables) enable(ref string) {
	if d.shared != nil {
		d.shared.Enable(ref)
		return
	}
	d.mu.Lock()
	delete(d.on, ref)
	d.n.Store(int32(len(d.on)))
	d.mu.Unlock()
}

// disabled reports whether the member ref is disabled at now, and until
// when (zero: until enabled). A disable whose end has come is ended here.
func (d *memberDisables) disabled(ref string, now time.Time) (until time.Time, ok bool) {
	v, ok := d.lookup(ref, now)
	return v.until, ok
}

// lookup returns the disable of ref in force at now, ending it if its end
// has come.
func (d *memberDisables) lookup(ref string, now time.Time) (memberDisable, bool) {
	if d.none() {
		return memberDisable{}, false
	}
	if d.shared != nil {
		until, reason, by, ok := d.shared.Disabled(ref, now)
		return memberDisable{until: until, reason: reason, by: by}, ok
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.on[ref]
	if ok && !v.until.IsZero() && !now.Before(v.until) {
		delete(d.on, ref)
		d.n.Store(int32(len(d.on)))
		return memberDisable{}, false
	}
	return v, ok
}

// keep drops the disables of every deployment for which listed is false
// (a reload that no longer lists a deployment drops its member breaker,
// and its disable with it). A shared set keeps them: they are the fleet's,
// and another gateway on the store may still list the deployment.
func (d *memberDisables) keep(listed func(ref string) bool) {
	if d.shared != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for ref := range d.on {
		if !listed(ref) {
			delete(d.on, ref)
		}
	}
	d.n.Store(int32(len(d.on)))
}

// none reports whether no member is disabled (nil: none); a shared set
// answers from its mirror, with no lock and no clock either.
func (d *memberDisables) none() bool {
	switch {
	case d == nil:
		return true
	case d.shared != nil:
		return !d.shared.Any()
	}
	return d.n.Load() == 0
}

// disabledMember reports whether the pool member ref is disabled by hand
// now: the walk's admission leaves it out (pool.Need.CanServe), in every
// pool that lists it.
func (g *Gateway) disabledMember(ref string) bool {
	if g.pools.off.none() {
		return false
	}
	_, ok := g.pools.off.disabled(ref, g.now())
	return ok
}

// outByHand folds the members of pd disabled by hand into e, what pd said
// when it admitted no member: a member disabled by hand is out for no
// provider's say (so the pool row answers 503, not 429, GATEWAY §11.4),
// and may serve again once its disable and its breaker's cooldown end.
func (g *Gateway) outByHand(pd *pooled, e *pool.UnavailableError) *pool.UnavailableError {
	now := g.now()
	out := *e
	for _, m := range pd.members {
		until, ok := g.pools.off.disabled(m.ref, now)
		if !ok {
			continue
		}
		out.Limited = false
		if until.IsZero() {
			continue // until enabled: no time to say
		}
		if open := g.memberBreaker(m.ref).Snapshot().OpenUntil; open.After(until) {
			until = open
		}
		if out.RetryAt.IsZero() || until.Before(out.RetryAt) {
			out.RetryAt = until
		}
	}
	return &out
}
