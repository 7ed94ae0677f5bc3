package fleet

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Pool members disabled by hand (docs/GATEWAY.md §11.5, docs/FLEET.md): an
// operator's disable of a deployment (upstream/model) is fleet state, as a
// chain entry's is. Each disabled member is one key of the store, written by
// one script call with its TTL on the store's clock (SET PX, the end being
// the store's TIME plus the TTL), and announced on the member's channel, so
// that every process's mirror has it within one pub/sub message and reads
// it with no round trip. The key goes away by itself at the end (the store
// expires it); a mirror ends the disable lazily at the same instant, read on
// its estimate of the store's clock.

// MemberDisables are the pool members disabled by hand for every process
// using the Store: a member disabled through one process is refused by
// every process, until its end (on the store's clock) or an enable through
// any of them. It is what the gateway's Options.MemberDisables takes (get
// it with [Store.MemberDisables]). Reads are the mirror's and cost no round
// trip; Disable and Enable cost one script call each. While the store is
// down a process applies its own disables and enables to its mirror; when
// the store answers again it re-reads every watched member (the store wins).
// Safe for concurrent use.
type MemberDisables struct {
	s    *Store
	mu   sync.Mutex                            // serializes Watch's writers
	offs atomic.Pointer[map[string]*memberOff] // watched members, copied on write
	on   atomic.Int32                          // watched members whose mirror is on (Any)
}

// memberOff is the mirror of one member's disable, a member of its Store
// (fed by the member's channel, re-read after a reconnection).
type memberOff struct {
	s              *Store
	on             *atomic.Int32 // its MemberDisables' count of members on
	key, vkey, chn string
	st             atomic.Pointer[offState]
}

// offState is a member's disable as the mirror knows it.
type offState struct {
	v          int64 // the version: the store's time (µs) of the last write, rising per member; 0: none read
	on         bool
	until      int64 // the end, store µs; 0: until enabled
	reason, by string
}

// MemberDisables returns the Store's member disables (one per Store).
func (s *Store) MemberDisables() *MemberDisables {
	s.offsOnce.Do(func() { s.offs = &MemberDisables{s: s} })
	return s.offs
}

// Watch makes the mirror follow the disables of the members refs
// (upstream/model): each one not watched yet is read from the store (one
// round trip) and followed from then on. A member that is not watched reads
// as not disabled; Disable and Enable watch their member first. A gateway
// watches every member of its pools when it builds them.
func (d *MemberDisables) Watch(refs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.watched()
	var add []*memberOff
	next := make(map[string]*memberOff, len(cur)+len(refs))
	for ref, m := range cur {
		next[ref] = m
	}
	for _, ref := range refs {
		if next[ref] != nil {
			continue
		}
		key := d.s.key("mdis", ref)
		m := &memberOff{s: d.s, on: &d.on, key: key, vkey: key + ":v", chn: key + ":ch"}
		m.st.Store(&offState{})
		next[ref] = m
		add = append(add, m)
	}
	d.offs.Store(&next)
	for _, m := range add {
		_ = d.s.register(m) // a new channel: never a duplicate (one MemberDisables per Store)
	}
}

// watched returns the watched members.
func (d *MemberDisables) watched() map[string]*memberOff {
	if p := d.offs.Load(); p != nil {
		return *p
	}
	return nil
}

// member returns ref's mirror, watching it first if it is not watched.
func (d *MemberDisables) member(ref string) *memberOff {
	if m := d.watched()[ref]; m != nil {
		return m
	}
	d.Watch(ref)
	return d.watched()[ref]
}

// Disable takes the member ref out of rotation for the whole fleet until
// until (zero: until enabled), for reason, by the admin key named by (one
// script call): the end is the store's now plus the time left until until,
// so it comes at the same instant for every process, and the member's key
// expires then. An until already past enables the member. A second disable
// replaces the first.
func (d *MemberDisables) Disable(ref string, until time.Time, reason, by string) {
	m := d.member(ref)
	var ttl int64
	if !until.IsZero() {
		if ttl = d.s.clock.toStore(until) - d.s.clock.storeNow()/1000; ttl <= 0 {
			d.Enable(ref)
			return
		}
	}
	tail := strconv.Itoa(len(by)) + " " + by + reason
	v, err := d.s.exec(offScript, []string{m.key, m.vkey},
		[]string{d.s.clock.arg(), "d", strconv.FormatInt(ttl, 10), tail, m.chn}, 0, nil)
	if err != nil || len(v) < 3 {
		m.local(until, reason, by, true)
		return
	}
	m.apply(&offState{v: v[1], on: true, until: v[2], reason: reason, by: by})
}

// Enable puts the member ref back in rotation for the whole fleet (one
// script call); a member not disabled: no change.
func (d *MemberDisables) Enable(ref string) {
	m := d.member(ref)
	v, err := d.s.exec(offScript, []string{m.key, m.vkey}, []string{d.s.clock.arg(), "e", "0", "", m.chn}, 0, nil)
	if err != nil || len(v) < 3 {
		m.local(time.Time{}, "", "", false)
		return
	}
	m.apply(&offState{v: v[1]})
}

// Disabled reports whether the member ref is disabled at now, from the
// mirror (no round trip): its end (zero: until enabled), the reason and the
// admin key's name. A disable whose end has come on the store's clock (now
// read on this process's estimate of it) reads as ended.
func (d *MemberDisables) Disabled(ref string, now time.Time) (until time.Time, reason, by string, ok bool) {
	m := d.watched()[ref]
	if m == nil {
		return time.Time{}, "", "", false
	}
	st := m.st.Load()
	if !st.on {
		return time.Time{}, "", "", false
	}
	if st.until != 0 {
		if d.s.clock.toStore(now) >= st.until {
			m.swap(st, &offState{v: st.v}) // ended: no message says so (the key expires)
			return time.Time{}, "", "", false
		}
		until = d.s.clock.toLocal(st.until)
	}
	return until, st.reason, st.by, true
}

// Any reports whether any watched member's mirror holds a disable (one
// atomic load: no lock, no clock): false means Disabled is false for every
// member. A disable whose end has passed counts until a read ends it.
func (d *MemberDisables) Any() bool { return d.on.Load() > 0 }

// swap replaces the mirror's state cur with st, keeping the count of
// members on; false if the state is no longer cur.
func (m *memberOff) swap(cur, st *offState) bool {
	if !m.st.CompareAndSwap(cur, st) {
		return false
	}
	switch {
	case st.on && !cur.on:
		m.on.Add(1)
	case cur.on && !st.on:
		m.on.Add(-1)
	}
	return true
}

// apply takes st, written at its version, unless the mirror has a newer one.
func (m *memberOff) apply(st *offState) {
	for {
		cur := m.st.Load()
		if st.v < cur.v || m.swap(cur, st) {
			return
		}
	}
}

// local applies a disable (on) or an enable to the mirror alone, at its
// version, while the store is down: the store's state wins when it answers.
func (m *memberOff) local(until time.Time, reason, by string, on bool) {
	for {
		cur := m.st.Load()
		st := &offState{v: cur.v, on: on, reason: reason, by: by}
		if on && !until.IsZero() {
			st.until = m.s.clock.toStore(until)
		}
		if m.swap(cur, st) {
			return
		}
	}
}

func (m *memberOff) channel() string { return m.chn }

// onMessage applies a change message: "d <v> <until> <len(by)> <by><reason>"
// or "e <v>".
func (m *memberOff) onMessage(payload string) {
	if st, ok := parseOff(payload); ok {
		m.apply(st)
	}
}

// parseOff parses a change message, which is also a disabled member's value.
func parseOff(s string) (*offState, bool) {
	f := strings.SplitN(s, " ", 5)
	if len(f) < 2 {
		return nil, false
	}
	v, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return nil, false
	}
	switch {
	case f[0] == "e":
		return &offState{v: v}, true
	case f[0] != "d" || len(f) != 5:
		return nil, false
	}
	until, err1 := strconv.ParseInt(f[2], 10, 64)
	n, err2 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || n < 0 || n > len(f[4]) {
		return nil, false
	}
	return &offState{v: v, on: true, until: until, by: f[4][:n], reason: f[4][n:]}, true
}

// sync re-reads the member's disable (the store wins): unless a newer
// change arrived while it read, the mirror becomes what the store holds, so
// a store restarted empty reads as no disable.
func (m *memberOff) sync(ctx context.Context) error {
	before := m.st.Load()
	c := m.s.client
	vs, err := c.Do(ctx, c.B().Mget().Key(m.key, m.vkey).Build()).ToArray()
	if err != nil {
		return err
	}
	if len(vs) != 2 {
		return errShortReply
	}
	st := &offState{}
	if val, err := vs[0].ToString(); err == nil {
		if p, ok := parseOff(val); ok {
			st = p
		}
	}
	if vv, err := vs[1].ToString(); err == nil {
		st.v, _ = strconv.ParseInt(vv, 10, 64)
	}
	for {
		cur := m.st.Load()
		if (cur != before && st.v < cur.v) || m.swap(cur, st) {
			return nil
		}
	}
}

// down and up: the mirror stays as it is while the store is down (a
// process's own writes go to it alone), and the watcher's re-read after
// the store answers again replaces it.
func (m *memberOff) down(Mode) {}
func (m *memberOff) up()       {}
