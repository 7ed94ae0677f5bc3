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

// entry is one tool: its stats and its breaker, in one allocation, so that a
// call touches one object past the lookup table. It is never moved or freed
// while the registry lives. The stats and their lock, written by every
// settlement, fill the first 64 bytes; the fields every call reads (name, r,
// the breaker's published state at its start) are on the next line (entries
// are 320-byte objects, 64-byte aligned), which settlements do not write: calls
// of one tool on other cores contend on the stats line only.
type entry struct {
	mu   sync.Mutex // guards st
	st   Stats
	_    [8]byte
	name string
	r    *Registry
	b    breaker.Breaker
}

// stats returns a copy of the tool's stats.
func (e *entry) stats() Stats {
	e.mu.Lock()
	s := e.st
	e.mu.Unlock()
	return s
}

// slot is one cell of a [table]: empty while e is nil. A slot is written once
// (hash, then e published), so a reader that loads a non-nil e sees its hash.
type slot struct {
	hash uint64
	e    atomic.Pointer[entry]
}

// table is an open-addressed hash table (linear probing) keyed by the tool
// name's maphash, at most half full. Readers use it without locking; inserts
// fill empty slots under Registry.mu, and growing publishes a new table.
type table struct {
	mask  uint64
	slots []slot
}

// minSlots is the size of the first table (a power of two).
const minSlots = 64

// find returns the entry of tool (whose hash is h), or nil if tool is not in t.
func (t *table) find(h uint64, tool string) *entry {
	for i := h & t.mask; ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		e := s.e.Load()
		if e == nil {
			return nil
		}
		if s.hash == h && e.name == tool {
			return e
		}
	}
}

// put stores e (whose hash is h) in an empty slot of t. t must have one, and
// must not hold e's name already; the caller serializes puts.
func (t *table) put(h uint64, e *entry) {
	i := h & t.mask
	for t.slots[i].e.Load() != nil {
		i = (i + 1) & t.mask
	}
	t.slots[i].hash = h
	t.slots[i].e.Store(e)
}

// Registry keeps one [breaker.Breaker] and one [Stats] record per tool name.
// Tools are created on first use of the gate ([Registry.Allow], [Do]) only;
// lookups and pure reads ([Registry.Breaker], [Registry.WouldAllow],
// [Registry.Stats], [Registry.Status], [Registry.Reset]) never create them,
// and read an unknown tool as a fresh closed breaker with no calls. A Registry is safe for concurrent
// use; lookups of known tools take no lock, hash the name once and do not
// allocate.
type Registry struct {
	tab       atomic.Pointer[table]
	seed      maphash.Seed
	nowFn     func() time.Time
	epoch     time.Time
	epochSec  int64
	epochNsec int64
	settings  breaker.Settings

	mu    sync.Mutex // serializes inserts
	count int        // entries in tab; guarded by mu
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
	r.tab.Store(&table{mask: minSlots - 1, slots: make([]slot, minSlots)})
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

// until returns how long until t on the registry's clock (Settings.Now, else
// the monotonic clock, which times built by the breakers carry).
func (r *Registry) until(t time.Time) time.Duration {
	if r.nowFn == nil {
		return time.Until(t)
	}
	return t.Sub(r.nowFn())
}

// lookup returns tool's entry, or nil if the tool is unknown.
func (r *Registry) lookup(tool string) *entry {
	return r.tab.Load().find(maphash.String(r.seed, tool), tool)
}

// get returns tool's entry, creating it on first use.
func (r *Registry) get(tool string) *entry {
	h := maphash.String(r.seed, tool)
	if e := r.tab.Load().find(h, tool); e != nil {
		return e
	}
	return r.create(h, tool)
}

// create is get for a tool not found without the lock.
func (r *Registry) create(h uint64, tool string) *entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tab.Load()
	if e := t.find(h, tool); e != nil {
		return e
	}
	s := r.settings
	s.Name = strings.Clone(tool)
	e := &entry{name: s.Name, r: r, st: freshStats}
	if err := e.b.Init(s); err != nil { // cannot happen: NewRegistry validated s
		panic(err)
	}
	if 2*(r.count+1) > len(t.slots) { // keep the table at most half full
		n := &table{mask: uint64(2*len(t.slots)) - 1, slots: make([]slot, 2*len(t.slots))}
		for i := range t.slots {
			if old := t.slots[i].e.Load(); old != nil {
				n.put(t.slots[i].hash, old)
			}
		}
		n.put(h, e)
		r.tab.Store(n)
	} else {
		t.put(h, e)
	}
	r.count++
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

// Breaker returns tool's breaker, or nil if the registry has never seen tool:
// a lookup creates nothing, so polling a mistyped name adds no tool to
// [Registry.Summary]. A nil *breaker.Breaker reads as a fresh closed breaker
// (its State, WouldAllow, RetryIn and Snapshot work), so
// r.Breaker(tool).State() is safe for any name. Only the gate
// ([Registry.Allow], [Do]) creates a tool. Calls made directly through the
// returned breaker are not recorded in the tool's [Stats].
func (r *Registry) Breaker(tool string) *breaker.Breaker {
	if e := r.lookup(tool); e != nil {
		return &e.b
	}
	return nil
}

// Reset returns tool's breaker to Closed by hand (see [breaker.Breaker.Reset]:
// counters cleared, OnStateChange called with the tool's name if the state
// changed, failures of calls that started before it stale) and reports
// whether the tool is known. An unknown tool is not created. The tool's
// [Stats] are kept: they describe the calls made, not the breaker's beliefs.
func (r *Registry) Reset(tool string) bool {
	e := r.lookup(tool)
	if e == nil {
		return false
	}
	e.b.Reset()
	return true
}

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
	t := r.tab.Load()
	for i := range t.slots {
		if e := t.slots[i].e.Load(); e != nil {
			st, s := e.b.State(), e.stats()
			out = append(out, ToolHealth{Tool: e.name, State: st, Status: statusOf(st, s), Stats: s})
		}
	}
	slices.SortFunc(out, func(a, b ToolHealth) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}
