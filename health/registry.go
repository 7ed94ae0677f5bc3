package health

import (
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// shardCount is the number of shards of the tool map (a power of two).
const shardCount = 256

// shard holds the tools whose names hash to it, in a copy-on-write map:
// lookups load the map without locking; inserts (first use of a tool) copy it
// under mu.
type shard struct {
	mu sync.Mutex
	m  atomic.Pointer[map[string]*entry]
	_  [48]byte // keep shards on separate cache lines
}

// entry is one tool: its breaker and its stats.
type entry struct {
	name string
	b    *breaker.Breaker
	r    *Registry
	mu   sync.Mutex
	st   Stats
}

// stats returns a copy of the tool's stats.
func (e *entry) stats() Stats {
	e.mu.Lock()
	s := e.st
	e.mu.Unlock()
	return s
}

// Registry keeps one [breaker.Breaker] and one [Stats] record per tool name.
// Tools are created on first use of the gate ([Registry.Allow]) or of
// [Registry.Breaker]; pure reads never create them, and read an unknown tool
// as a fresh closed breaker with no calls. A Registry is safe for concurrent
// use; lookups of known tools take no global lock and do not allocate.
type Registry struct {
	settings  breaker.Settings
	seed      maphash.Seed
	shards    [shardCount]shard
	nowFn     func() time.Time
	epoch     time.Time
	epochSec  int64
	epochNsec int64
}

// NewRegistry returns an empty registry whose breakers all use s, except that
// each breaker's Name is its tool's name (s.Name is ignored), so
// s.OnStateChange receives the tool's name. s.Now also times the calls
// recorded in [Stats]. Invalid settings are an error, as for [breaker.New].
func NewRegistry(s breaker.Settings) (*Registry, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	s.Name = ""
	r := &Registry{settings: s, seed: maphash.MakeSeed(), nowFn: s.Now}
	if r.nowFn != nil {
		r.epoch = r.nowFn()
		r.epochSec, r.epochNsec = r.epoch.Unix(), int64(r.epoch.Nanosecond())
	} else {
		r.epoch = time.Now()
	}
	return r, nil
}

// now reads the registry's clock as nanoseconds since its epoch (see
// breaker.Settings.Now: monotonic without Now, wall values with it).
func (r *Registry) now() int64 {
	if r.nowFn == nil {
		return int64(time.Since(r.epoch))
	}
	t := r.nowFn()
	if s := t.Unix() - r.epochSec; s > -1<<32 && s < 1<<32 {
		return s*1e9 + int64(t.Nanosecond()) - r.epochNsec
	}
	return int64(t.Sub(r.epoch))
}

// shardOf returns the shard of tool.
func (r *Registry) shardOf(tool string) *shard {
	return &r.shards[maphash.String(r.seed, tool)&(shardCount-1)]
}

// lookup returns tool's entry, or nil if the tool is unknown.
func (r *Registry) lookup(tool string) *entry {
	if m := r.shardOf(tool).m.Load(); m != nil {
		return (*m)[tool]
	}
	return nil
}

// get returns tool's entry, creating it on first use.
func (r *Registry) get(tool string) *entry {
	sh := r.shardOf(tool)
	if m := sh.m.Load(); m != nil {
		if e := (*m)[tool]; e != nil {
			return e
		}
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var old map[string]*entry
	if m := sh.m.Load(); m != nil {
		old = *m
		if e := old[tool]; e != nil {
			return e
		}
	}
	s := r.settings
	s.Name = strings.Clone(tool)
	b, err := breaker.New(s)
	if err != nil { // cannot happen: the settings were validated by NewRegistry
		panic(err)
	}
	e := &entry{name: s.Name, b: b, r: r, st: freshStats}
	m := make(map[string]*entry, len(old)+1)
	for k, v := range old {
		m[k] = v
	}
	m[e.name] = e
	sh.m.Store(&m)
	return e
}

// Allow is the mutating gate of tool's breaker (see [breaker.Breaker.Allow]),
// creating the tool on first use. A refusal returns a zero Permit and the
// breaker's [*breaker.OpenError]; it touches neither the breaker nor the stats.
func (r *Registry) Allow(tool string) (Permit, error) {
	e := r.get(tool)
	p, err := e.b.Allow()
	if err != nil {
		return Permit{}, err
	}
	return Permit{e: e, p: p, start: r.now()}, nil
}

// WouldAllow reports whether [Registry.Allow] would grant a call to tool at
// this instant, without changing or creating anything. An unknown tool would be
// allowed.
func (r *Registry) WouldAllow(tool string) bool {
	if e := r.lookup(tool); e != nil {
		return e.b.WouldAllow()
	}
	return true
}

// Breaker returns tool's breaker, creating the tool on first use. Calls made
// directly through it are not recorded in the tool's [Stats].
func (r *Registry) Breaker(tool string) *breaker.Breaker { return r.get(tool).b }

// Stats returns tool's call record (for an unknown tool: no calls, EWMA 1.0).
// It creates nothing.
func (r *Registry) Stats(tool string) Stats {
	if e := r.lookup(tool); e != nil {
		return e.stats()
	}
	return freshStats
}

// Status judges tool: Unhealthy if its breaker is open ([breaker.Breaker.State]
// is Open), else by score. An unknown tool is Healthy. It creates nothing.
func (r *Registry) Status(tool string) Status {
	if e := r.lookup(tool); e != nil {
		return statusOf(e.b.State(), e.stats())
	}
	return Healthy
}

// Summary returns the health of every known tool, sorted by tool name.
func (r *Registry) Summary() []ToolHealth {
	var out []ToolHealth
	for i := range r.shards {
		m := r.shards[i].m.Load()
		if m == nil {
			continue
		}
		for _, e := range *m {
			st, s := e.b.State(), e.stats()
			out = append(out, ToolHealth{Tool: e.name, State: st, Status: statusOf(st, s), Stats: s})
		}
	}
	slices.SortFunc(out, func(a, b ToolHealth) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}
