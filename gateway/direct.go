package gateway

import (
	"cmp"
	"net/http"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// lookup returns the route of a model name: a configured model, or an
// upstream/model reference to a configured upstream (created on first use,
// within limits.max_direct). It returns nil, nil for a name it does not
// serve, and a *localError (429) when every slot holds an open breaker.
func (g *Gateway) lookup(name string) (*route, error) {
	if rt := g.models[name]; rt != nil {
		return rt, nil
	}
	upName, model, ok := strings.Cut(name, "/")
	if !ok || model == "" || g.upstreams[upName] == nil || g.direct.max == 0 {
		return nil, nil
	}
	g.direct.mu.RLock()
	rt := g.direct.routes[name]
	g.direct.mu.RUnlock()
	if rt != nil {
		rt.used.Store(g.direct.tick.Add(1))
		return rt, nil
	}
	g.direct.mu.Lock()
	defer g.direct.mu.Unlock()
	if rt = g.direct.routes[name]; rt != nil {
		rt.used.Store(g.direct.tick.Add(1))
		return rt, nil
	}
	if len(g.direct.routes) >= g.direct.max {
		victim, wait := g.victim()
		if victim == nil {
			return nil, &localError{status: http.StatusTooManyRequests, retry: wait, e: apiError{
				Message: "every direct upstream/model slot (limits.max_direct) holds an open breaker; try again later or use a configured model",
				Type:    "rate_limit_error", Param: "model", Code: "direct_models_busy"}}
		}
		delete(g.direct.routes, victim.name)
		g.m.breakers.RemoveManager(victim.name)
		if r, ok := victim.settings.Backend.(interface{ Release() }); ok {
			r.Release() // e.g. a fleet.Store forgets the evicted breaker
		}
		g.m.forget(victim.name, g.direct.targets[victim.name])
	}
	rt, err := g.newRoute(Model{Name: name, Primary: name})
	if err != nil {
		return nil, nil
	}
	rt.used.Store(g.direct.tick.Add(1))
	rt.direct = true
	g.direct.routes[name] = rt
	return rt, nil
}

// victim returns the least recently used direct route whose breaker is
// closed (g.directMu held), or nil and the time until the first open one
// may be probed again.
func (g *Gateway) victim() (*route, time.Duration) {
	var best *route
	wait := time.Duration(1<<63 - 1)
	now := g.now()
	for _, rt := range g.direct.routes {
		b := rt.mgr
		if b.State() != fallback.Primary {
			rec := cmp.Or(rt.settings.RecoveryTimeout, fallback.DefaultRecoveryTimeout)
			if at := b.Snapshot().TrippedAt; !at.IsZero() {
				wait = min(wait, at.Add(rec).Sub(now))
			}
			continue
		}
		if best == nil || rt.used.Load() < best.used.Load() {
			best = rt
		}
	}
	if wait == time.Duration(1<<63-1) {
		wait = time.Second
	}
	return best, max(wait, time.Second)
}
