package fleet

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/internal/notify"
)

// toolMirror is one immutable view of a shared tool breaker, published for
// the lock-free paths. Store times are in µs since the Unix epoch.
type toolMirror struct {
	mode  Mode
	quiet bool       // Shared, Closed, no failure pending: the zero-round-trip gate
	local *localTool // LocalMode only
	ep, v uint64
	m     int // 0 closed, 1 open, 2 half-open probing, 3 half-open slot free
	g     uint64
	f     int64
	lf    int64 // last failure, -1 none
	ps    int64 // probe start
}

// transition is one state change waiting for delivery to OnStateChange.
type transition struct{ from, to breaker.State }

// ToolBreaker is a tool circuit breaker (SEMANTICS §1) whose state is shared
// by every process that creates one with the same Store prefix and name.
// Create it with [Store.Tool]. It is used exactly like a [breaker.Breaker]:
// Allow hands out a [Permit] that is settled once. A ToolBreaker is safe for
// concurrent use.
type ToolBreaker struct {
	s         *Store
	name      string
	keys      []string
	ch        string
	threshold int64
	rec       int64 // µs
	lease     int64 // µs
	static    [3]string
	onChange  func(name string, from, to breaker.State)
	events    notify.Queue[transition]

	mirror atomic.Pointer[toolMirror]
	quiet  *breaker.Quiet // mirror.quiet and mirror.g, for breaker.Breaker's fast path

	mu     sync.Mutex // serializes mirror writes
	last   breaker.State
	locals atomic.Uint64 // local breakers made so far (their permits' ids)
}

// Tool returns the shared tool breaker named bs.Name, configured by bs
// exactly as [breaker.New] would be (the same defaults and validation;
// Settings.Now is not used: shared time is the store's). Every process of
// the fleet must use the same settings for the same name. A Store holds one
// breaker per name: a second call with the same name is an error. The
// failure-rate window and slow calls of SEMANTICS §8 are kept per process by
// the breaker.Breaker (docs/FLEET.md): to have them, build it with breaker.New
// and [Store.ToolBackend]; a ToolBreaker used directly does not apply them.
func (s *Store) Tool(bs breaker.Settings) (*ToolBreaker, error) {
	if err := bs.Validate(); err != nil {
		return nil, err
	}
	th := int64(bs.FailureThreshold)
	if th == 0 {
		th = breaker.DefaultFailureThreshold
	}
	rec, lease := bs.RecoveryDuration, bs.ProbeTimeout
	if rec == 0 {
		rec = breaker.DefaultRecoveryDuration
	}
	if lease == 0 {
		lease = breaker.DefaultProbeTimeout
	}
	key := s.key("tool", bs.Name)
	b := &ToolBreaker{
		s:         s,
		name:      bs.Name,
		keys:      []string{key},
		ch:        key + ":ch",
		threshold: th,
		rec:       rec.Microseconds(),
		lease:     lease.Microseconds(),
		onChange:  bs.OnStateChange,
	}
	b.static = [3]string{
		strconv.FormatInt(b.threshold, 10),
		strconv.FormatInt(b.rec, 10),
		strconv.FormatInt(b.lease, 10),
	}
	b.quiet = breaker.NewQuiet(s.clock.now, time.Microsecond)
	b.quiet.Publish(0, true)
	b.mirror.Store(&toolMirror{mode: Shared, quiet: true, lf: -1})
	if err := s.register(b); err != nil {
		return nil, err
	}
	return b, nil
}

// Name returns the breaker's name.
func (b *ToolBreaker) Name() string { return b.name }

func (b *ToolBreaker) channel() string { return b.ch }

// script runs one event on the store for a permit of generation gen issued
// at at (store µs; a probe: its grant). Reply layout: see toolLua.
func (b *ToolBreaker) script(op string, probe bool, gen uint64, at int64) ([]int64, error) {
	return b.scriptTrip(op, probe, gen, at, false)
}

// scriptTrip is script with the trip flag of a verdict after which the
// process's rate window tripped (breaker.OutcomeTrip).
func (b *ToolBreaker) scriptTrip(op string, probe bool, gen uint64, at int64, trip bool) ([]int64, error) {
	args := []string{op, b.static[0], b.static[1], b.static[2], b.ch,
		flag(probe), strconv.FormatUint(gen, 10), strconv.FormatInt(at, 10), b.s.clock.arg(), flag(trip)}
	v, err := b.s.exec(toolScript, b.keys, args, 7)
	if err != nil {
		return nil, err
	}
	if len(v) < 11 {
		return nil, errShortReply
	}
	b.apply(v[:7], nil)
	return v, nil
}

// flag is a script argument's boolean.
func flag(x bool) string {
	if x {
		return "1"
	}
	return "0"
}

// apply stores a state (ep, v, m, g, f, lf, ps) into the mirror if it is newer
// than the mirror's (or from another epoch). With since not nil (a re-read
// after a reconnection) it stores it even if older, unless the mirror changed
// since since was loaded: a store restarted from a dump may hold older
// versions, but a notification that arrived meanwhile is newer still.
func (b *ToolBreaker) apply(st []int64, since *toolMirror) {
	b.mu.Lock()
	cur := b.mirror.Load()
	ep, v := uint64(st[0]), uint64(st[1])
	if (since == nil || since != cur) && ep == cur.ep && v <= cur.v {
		b.mu.Unlock()
		return
	}
	n := *cur
	n.ep, n.v, n.m, n.g, n.f, n.lf, n.ps = ep, v, int(st[2]), uint64(st[3]), st[4], st[5], st[6]
	b.publish(&n)
}

// publish stores n as the mirror, queues the state change it makes, releases
// b.mu and delivers callbacks. b.mu must be held.
func (b *ToolBreaker) publish(n *toolMirror) {
	n.quiet = n.mode == Shared && n.m == 0 && n.f == 0
	b.mirror.Store(n)
	b.quiet.Publish(n.g, n.quiet)
	b.changed()
}

// changed queues a callback if the public state moved, releases b.mu and
// delivers. b.mu must be held.
func (b *ToolBreaker) changed() {
	st := b.rawState(b.mirror.Load())
	from := b.last
	b.last = st
	if from != st && b.onChange != nil {
		b.events.Push(transition{from, st})
	}
	b.mu.Unlock()
	if b.onChange != nil {
		b.events.Drain(func(t transition) { b.onChange(b.name, t.from, t.to) })
	}
}

// rawState is the state without lazy lease expiry.
func (b *ToolBreaker) rawState(mr *toolMirror) breaker.State {
	switch mr.mode {
	case LocalMode:
		return mr.local.state(time.Now().UnixNano(), false)
	case FailOpenMode:
		return breaker.Closed
	case FailClosedMode:
		return breaker.Open
	}
	return modeState(mr.m)
}

func modeState(m int) breaker.State {
	switch m {
	case 0:
		return breaker.Closed
	case 1:
		return breaker.Open
	}
	return breaker.HalfOpen
}

// onMessage applies a change notification: "ep v m g f lf ps".
func (b *ToolBreaker) onMessage(payload string) {
	var st [7]int64
	if !parseInts(payload, st[:]) {
		return
	}
	b.apply(st[:], nil)
}

// sync re-reads the store's state into the mirror (the store wins).
func (b *ToolBreaker) sync(ctx context.Context) error {
	args := []string{"sync", b.static[0], b.static[1], b.static[2], b.ch, "0", "0", "0", b.s.clock.arg()}
	before := b.mirror.Load()
	v, err := b.s.run(ctx, toolScript, b.keys, args, 7)
	if err != nil {
		return err
	}
	if len(v) < 11 {
		return errShortReply
	}
	b.apply(v[:7], before)
	return nil
}

// down switches to the store-down mode m, seeding a local breaker from the
// mirror for LocalMode.
func (b *ToolBreaker) down(m Mode) {
	b.mu.Lock()
	cur := b.mirror.Load()
	if cur.mode == m {
		b.mu.Unlock()
		return
	}
	n := *cur
	n.mode, n.local = m, nil
	if m == LocalMode {
		n.local = b.seed(cur)
	}
	b.publish(&n)
}

// up goes back to the shared state the last sync read.
func (b *ToolBreaker) up() {
	b.mu.Lock()
	cur := b.mirror.Load()
	if cur.mode == Shared {
		b.mu.Unlock()
		return
	}
	n := *cur
	n.mode, n.local = Shared, nil
	b.publish(&n)
}

// seed builds the local breaker from the mirror, in local wall-clock ns.
func (b *ToolBreaker) seed(mr *toolMirror) *localTool {
	off := b.s.clock.offset.Load()
	toLocal := func(us int64) int64 { return us*1000 - off }
	id := b.locals.Add(1)
	lt := &localTool{th: b.threshold, rec: b.rec * 1000, lease: b.lease * 1000, base: localBit | (id&0xffff)<<40, f: mr.f}
	lt.g = lt.base + 1
	switch mr.m {
	case 1:
		lt.m, lt.lf = 1, toLocal(mr.lf)
	case 2:
		lt.m, lt.ps = 2, toLocal(mr.ps) // someone else's probe: its lease still runs
	case 3:
		lt.m = 3
	}
	if mr.lf >= 0 {
		lt.lf, lt.hasLF = toLocal(mr.lf), true
	}
	return lt
}

// parseInts parses space-separated integers into dst; false unless exactly len(dst).
func parseInts(s string, dst []int64) bool {
	for i := range dst {
		var field string
		field, s, _ = strings.Cut(s, " ")
		n, err := strconv.ParseInt(field, 10, 64)
		if err != nil {
			return false
		}
		dst[i] = n
	}
	return s == ""
}
