package gateway

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// Pools (docs/GATEWAY.md §11): a model's primary or chain entry may be
// pool/<name>, one entry of the model breaker standing for several
// deployments of one model, each behind its own member breaker. What a
// gateway builds of them:
//
//   - one member breaker per deployment (upstream/model), shared by every
//     pool that lists it, separate from any model breaker that names the
//     same deployment; a reload keeps it (reconfigured) while a pool still
//     lists the deployment, so a tripped member stays tripped;
//   - one [pool.Figures] per gateway, carried across reloads, so that a
//     deployment's in-flight count, latency estimates and headroom are its
//     own whichever pool sent the request, and survive a reload;
//   - one [pool.Pool] per configured pool, and for each member an ordinary
//     target, translated per member wire as chain entries are.
//
// For the admin view, the metrics and the fleet (they read, never change,
// what is built here): [Gateway.poolsOf] lists the pools a model's route
// names, in route order; [Gateway.poolNamed] finds one by name;
// [Gateway.memberBreaker] returns a deployment's member breaker;
// [Gateway.memberRefs] lists every deployment that has one.

// poolPrefix starts a pool entry's name in a model's primary or chain:
// pool/<name> (no upstream may be named pool).
const poolPrefix = "pool/"

// poolName returns the pool an entry names (pool/<name>) and true, or ""
// and false for an upstream/model entry.
func poolName(ref string) (string, bool) {
	return strings.CutPrefix(ref, poolPrefix)
}

// pools are a gateway's pools, its member breakers and its figures.
type pools struct {
	byName  map[string]*pooled          // by pool name
	order   []*pooled                   // in config order
	members map[string]*breaker.Breaker // member breakers, by upstream/model
	figures *pool.Figures               // kept across reloads
	off     *memberDisables             // members disabled by hand, kept across reloads (memberdisable.go)
}

// pooled is one configured pool: the pool that chooses among its members,
// and each member's target.
type pooled struct {
	entry   string     // pool/<name>, as models name it
	cfg     Pool       // as configured
	p       *pool.Pool // the choice, the members' breakers and figures
	members []*target  // member i's target (i as pool.Attempt.Member)
}

// member returns the target of member i.
func (pd *pooled) member(i int) *target { return pd.members[i] }

// buildPools builds the pools of cfg into g, with the member breakers and
// figures of old (the pools of the gateway being reloaded; nil: new ones).
// A member breaker of old whose deployment a pool still lists is kept and
// takes the new settings ((*breaker.Breaker).Reconfigure): its state, trip
// count and open-until survive the reload. The error names the pool by
// its key path.
func (g *Gateway) buildPools(list []Pool, old *pools) error {
	g.pools = pools{byName: map[string]*pooled{}, members: map[string]*breaker.Breaker{}, figures: &pool.Figures{},
		off: &memberDisables{shared: g.opt.MemberDisables}}
	if old != nil && old.figures != nil {
		g.pools.figures = old.figures
	}
	if old != nil && old.off != nil {
		g.pools.off = old.off
	}
	for i, pc := range list {
		pd, err := g.buildPool(pc, old)
		if err != nil {
			return &ConfigError{Problems: []Problem{{Path: fmt.Sprintf("pools[%d]", i), Message: err.Error()}}}
		}
		g.pools.byName[pc.Name] = pd
		g.pools.order = append(g.pools.order, pd)
	}
	if old != nil {
		g.pools.off.keep(func(ref string) bool { return g.pools.members[ref] != nil })
	}
	g.watchMembers()
	return nil
}

// buildPool builds one configured pool, pc: its members' targets and
// breakers (old's when it has the deployment's), and its pool.Pool.
func (g *Gateway) buildPool(pc Pool, old *pools) (*pooled, error) {
	pd := &pooled{entry: poolPrefix + pc.Name, cfg: pc}
	s := g.poolSettings(pc)
	for _, m := range pc.Members {
		b, err := g.memberBreakerFor(m.Target, pc.Breaker, old)
		if err != nil {
			return nil, err
		}
		s.Members = append(s.Members, pool.Member{Name: m.Target, Weight: cmp.Or(m.Weight, 1), Breaker: b,
			SlowCallAfter: pc.Breaker.SlowCallAfter})
		pd.members = append(pd.members, g.newTarget(m.Target))
	}
	p, err := pool.New(s)
	if err != nil {
		return nil, err
	}
	pd.p = p
	return pd, nil
}

// poolSettings returns the settings of the pool of pc but its members:
// the choice's, on the gateway's clock, random source and figures, a
// failure's penalty timeouts.first_byte and an attempt's lease
// timeouts.request.
func (g *Gateway) poolSettings(pc Pool) pool.Settings {
	s := pool.Settings{
		Name:           pc.Name,
		Members:        make([]pool.Member, 0, len(pc.Members)),
		AffinitySlack:  pc.AffinitySlack,
		Penalty:        g.limits.firstByte,
		AttemptTimeout: g.limits.request,
		Rand:           poolRand(g.opt.Rand),
		Figures:        g.pools.figures,
		Now:            g.now,
	}
	if pc.Affinity == "none" {
		s.Affinity = pool.AffinityNone
	}
	return s
}

// memberBreakerFor returns the member breaker of deployment ref with the
// settings of a pool's breaker: b: the one built already for an earlier
// pool of this configuration (every pool that lists a deployment shares
// its breaker; Config.Validate refuses two settings for one), else old's,
// reconfigured, else a new one on the gateway's clock, on
// Options.MemberBackend when set (pools_fleet.go). A new one on a backend
// is reconfigured too: the backend may hand back the shared breaker of an
// earlier configuration that listed the deployment, with its settings.
func (g *Gateway) memberBreakerFor(ref string, b Breaker, old *pools) (*breaker.Breaker, error) {
	if mb := g.pools.members[ref]; mb != nil {
		return mb, nil
	}
	s := memberSettings(ref, b)
	s.Now, s.Backend = g.opt.Now, g.opt.MemberBackend
	var mb *breaker.Breaker
	var err error
	if kept := old.memberBreaker(ref); kept != nil {
		mb, err = kept, kept.Reconfigure(s)
	} else if mb, err = breaker.New(s); err == nil && s.Backend != nil {
		err = mb.Reconfigure(s)
	}
	if err != nil {
		return nil, err
	}
	g.pools.members[ref] = mb
	return mb, nil
}

// memberBreaker returns the member breaker of deployment ref
// (upstream/model), or nil when no pool lists it.
func (ps *pools) memberBreaker(ref string) *breaker.Breaker {
	if ps == nil {
		return nil
	}
	return ps.members[ref]
}

// poolRand adapts the gateway's random source (Options.Rand, a float in
// [0, 1)) to the pool's 64-bit one; nil stays nil (math/rand/v2).
func poolRand(rnd func() float64) func() uint64 {
	if rnd == nil {
		return nil
	}
	return func() uint64 { return uint64(rnd() * (1 << 64)) }
}

// newTarget returns the target of the deployment ref (upstream/model) on
// the gateway's upstreams.
func (g *Gateway) newTarget(ref string) *target {
	upName, model, _ := strings.Cut(ref, "/")
	return &target{ref: ref, model: model, up: g.upstreams[upName], quoted: quote(model), hdr: []string{ref}}
}

// entryTarget returns the target of a route's entry ref: a deployment's,
// or for pool/<name> a target standing for the pool (its pool set, no
// upstream of its own: each member attempt goes to the member's target).
func (g *Gateway) entryTarget(ref string) *target {
	if name, ok := poolName(ref); ok {
		return &target{ref: ref, hdr: []string{ref}, pool: g.pools.byName[name]}
	}
	return g.newTarget(ref)
}

// speaksOpenAI reports whether tg may serve embeddings: an openai
// upstream, or a pool with an openai member.
func (tg *target) speaksOpenAI() bool {
	if tg.pool != nil {
		for _, m := range tg.pool.members {
			if m.speaksOpenAI() {
				return true
			}
		}
		return false
	}
	return tg.up != nil && tg.up.api == APIOpenAI
}

// poolsOf returns the pools the route of the configured model names, in
// the order of its primary and chain (none for an unknown model or one
// without pools).
func (g *Gateway) poolsOf(model string) []*pooled {
	rt := g.models[model]
	if rt == nil {
		return nil
	}
	var out []*pooled
	for _, ref := range append([]string{rt.settings.Primary}, rt.settings.Chain...) {
		if tg := rt.targets[ref]; tg != nil && tg.pool != nil {
			out = append(out, tg.pool)
		}
	}
	return out
}

// poolNamed returns the configured pool name (nil if none).
func (g *Gateway) poolNamed(name string) *pooled { return g.pools.byName[name] }

// memberBreaker returns the member breaker of deployment ref
// (upstream/model), or nil when no pool lists it.
func (g *Gateway) memberBreaker(ref string) *breaker.Breaker { return g.pools.memberBreaker(ref) }

// memberRefs returns every deployment that has a member breaker, in the
// order of the pools and their members.
func (g *Gateway) memberRefs() []string {
	var out []string
	seen := map[string]bool{}
	for _, pd := range g.pools.order {
		for _, m := range pd.members {
			if !seen[m.ref] {
				seen[m.ref] = true
				out = append(out, m.ref)
			}
		}
	}
	return out
}

// configuredTargets records the deployments route rt names, its pools'
// members included, as configured ones (limits.max_direct counts only the
// others).
func (g *Gateway) configuredTargets(rt *route) {
	for ref, tg := range rt.targets {
		g.direct.targets[ref] = true
		if tg.pool != nil {
			for _, m := range tg.pool.members {
				g.direct.targets[m.ref] = true
			}
		}
	}
}
