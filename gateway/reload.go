package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/loopctl/loopctl-go/fallback"
)

// Reloaded says what [Gateway.Reload] did, by model name.
type Reloaded struct {
	// Kept are the models whose primary and chain are unchanged (a pool
	// entry: its set of member targets, whatever their weights): their
	// breakers keep their state, holds and disables, and take the new
	// settings at once.
	Kept []string `json:"kept"`
	// Started are the models with a new breaker, in Primary: new models,
	// and models whose primary or chain changed.
	Started []string `json:"started"`
	// Dropped are the models no longer configured: their breakers are gone.
	Dropped []string `json:"dropped"`
	// Restart are the key paths whose change needs a restart (listen,
	// store.*): they were not applied.
	Restart []string `json:"restart"`
}

// Reload returns a gateway serving cfg that carries g's state over
// (docs/GATEWAY.md §9.3): every check of [New] runs first, and when one
// fails, the error (a [*ConfigError] naming every problem by key path) is
// returned and nothing of g changed. A model whose primary and chain are
// unchanged keeps its breaker (its state, holds and disables), reconfigured
// with the new settings; any other model gets a new breaker (with
// Options.Backend, a new shared one: its store name includes a digest of
// its primary and chain); a removed model's breaker is dropped. A pool
// entry is unchanged when its member targets are; a pool member's breaker
// is kept, reconfigured, while a pool lists its deployment, and the pools'
// figures are kept. The metrics, the dashboard, the upstream transport and
// the Responses pins are g's.
// Listen and Store are not applied (they need a restart; Reloaded.Restart
// names them). The caller serves new requests with the returned gateway;
// requests in flight on g finish on g's configuration.
func (g *Gateway) Reload(cfg Config) (*Gateway, Reloaded, error) {
	var rep Reloaded
	if err := cfg.Validate(); err != nil {
		return nil, rep, err
	}
	rep.Restart = restartKeys(g.cfg, cfg)
	cfg.Listen, cfg.Store = g.cfg.Listen, g.cfg.Store
	next := newGateway(cfg, g.opt)
	next.pins, next.m, next.transport = g.pins, g.m, g.transport
	if err := next.readKeys(cfg, g.opt.Getenv); err != nil {
		return nil, rep, err
	}
	if err := next.buildPolicy(cfg.Retry, g.opt.Rand); err != nil {
		return nil, rep, err
	}
	if err := next.checkModels(cfg.Models); err != nil {
		return nil, rep, err
	}
	// The pools are checked on in-process breakers, touching nothing
	// shared, then built for good on g's member breakers and figures.
	if err := next.checkPools(cfg.Pools); err != nil {
		return nil, rep, err
	}
	if err := next.buildPools(cfg.Pools, &g.pools); err != nil {
		return nil, rep, err
	}
	keep := g.keepers(cfg.Models, cfg.Pools)
	holds := g.holds(cfg.Models, keep) // read before retire releases the old breakers
	rep.Dropped = g.retire(cfg.Models, keep)
	for _, m := range cfg.Models {
		rt, err := next.buildRoute(m, keep[m.Name])
		if err != nil { // checked above: only a library refusing settings it accepted
			return nil, rep, &ConfigError{Problems: []Problem{{Path: "models", Message: err.Error()}}}
		}
		next.models[m.Name], next.order = rt, append(next.order, rt)
		next.configuredTargets(rt)
		if keep[m.Name] != nil {
			rep.Kept = append(rep.Kept, m.Name)
		} else {
			if h, ok := holds[m.Name]; ok {
				rt.mgr.Hold(h.HoldUntil, h.HoldReason)
			}
			rep.Started = append(rep.Started, m.Name)
		}
	}
	next.adoptDirect(g)
	next.lists.openai, next.lists.anthropic = modelList(cfg.Models), anthropicModelList(cfg.Models)
	g.next.Store(next)
	return next, rep, nil
}

// restartKeys are the key paths of what changed from old to cfg that a
// reload does not apply.
func restartKeys(old, cfg Config) []string {
	var out []string
	if old.Listen != cfg.Listen {
		out = append(out, "listen")
	}
	if old.Store.Redis != cfg.Store.Redis {
		out = append(out, "store.redis")
	}
	if old.Store.Prefix != cfg.Store.Prefix {
		out = append(out, "store.prefix")
	}
	if old.Store.Required != cfg.Store.Required {
		out = append(out, "store.required")
	}
	return out
}

// checkModels checks every model's breaker settings as the library would
// build them, without building one (nothing shared is touched).
func (g *Gateway) checkModels(models []Model) error {
	var ps problems
	for i, m := range models {
		s := g.breakerSettings(m)
		s.Backend = nil
		if _, err := fallback.New(s); err != nil {
			ps.add(fmt.Sprintf("models[%d]", i), "%v", err)
		}
	}
	return ps.err()
}

// keepers returns the routes of g whose model is in models with the same
// primary and chain, by name; a pool entry is the same when its member
// targets under pools are g's (pool_reload.go).
func (g *Gateway) keepers(models []Model, pools []Pool) map[string]*route {
	keep := map[string]*route{}
	for _, m := range models {
		if old := g.models[m.Name]; old != nil && old.settings.Primary == m.Primary && slices.Equal(old.settings.Chain, m.Chain) &&
			samePools(m, g.cfg.Pools, pools) {
			keep[m.Name] = old
		}
	}
	return keep
}

// holds returns the holds in force on g's models that stay configured
// with another primary or chain, by name: SEMANTICS §8.5, a hold survives
// a reload unless its model is removed, so the model's new breaker (which
// otherwise starts in Primary, GATEWAY §9.3) takes it on.
func (g *Gateway) holds(models []Model, keep map[string]*route) map[string]fallback.Snapshot {
	holds := map[string]fallback.Snapshot{}
	for _, m := range models {
		old := g.models[m.Name]
		if old == nil || keep[m.Name] != nil {
			continue
		}
		if s := old.mgr.Snapshot(); s.HoldUntil.After(g.now()) {
			holds[m.Name] = s
		}
	}
	return holds
}

// retire drops the breakers of g's models that are not kept: removed from
// the metrics' state gauges and released from the store; a model no longer
// configured loses its metric series too. It returns those models' names.
func (g *Gateway) retire(models []Model, keep map[string]*route) []string {
	still := map[string]bool{}
	for _, m := range models {
		still[m.Name] = true
	}
	var dropped []string
	for _, old := range g.order {
		if keep[old.name] != nil {
			continue
		}
		g.m.breakers.RemoveManager(old.name)
		release(old.settings.Backend)
		if !still[old.name] {
			g.m.forget(old.name, true)
			dropped = append(dropped, old.name)
		}
	}
	return dropped
}

// release lets a backend that can forget a breaker (a fleet.Store's) do so.
func release(b fallback.Backend) {
	if r, ok := b.(interface{ Release() }); ok {
		r.Release()
	}
}

// adoptDirect carries g's upstream/model routes over to next (which is
// being built from g): each keeps its breaker while its upstream is still
// configured and the name is not now a configured model's; the others are
// dropped.
func (next *Gateway) adoptDirect(g *Gateway) {
	g.direct.mu.RLock()
	defer g.direct.mu.RUnlock()
	for name, old := range g.direct.routes {
		upName, _, _ := strings.Cut(name, "/")
		if next.upstreams[upName] == nil || next.models[name] != nil || next.direct.max == 0 {
			g.m.breakers.RemoveManager(name)
			release(old.settings.Backend)
			g.m.forget(name, g.direct.targets[name])
			continue
		}
		rt, err := next.buildRoute(Model{Name: name, Primary: name}, old)
		if err != nil {
			continue
		}
		rt.direct = true
		rt.used.Store(old.used.Load())
		next.direct.routes[name] = rt
	}
	next.direct.tick.Store(g.direct.tick.Load())
}

// storeName is the name of model m's breaker in a shared store: a
// configured model's name, "@" and the first 16 hex digits of the SHA-256
// of its primary and chain (fleet.StoreName's), so that a reload that
// changes them starts a new shared breaker and never reads the old one's
// state (docs/GATEWAY.md §9.3); an upstream/model name as is.
func storeName(m Model) string {
	if m.Name == m.Primary && len(m.Chain) == 0 {
		return m.Name
	}
	h := sha256.New()
	h.Write([]byte(m.Primary))
	for _, c := range m.Chain {
		h.Write([]byte{0})
		h.Write([]byte(c))
	}
	return m.Name + "@" + hex.EncodeToString(h.Sum(nil)[:8])
}
