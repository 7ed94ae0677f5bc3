package fleet

import (
	"cmp"
	"context"
	"math"
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
	modal[*localTool]
	quiet bool // Shared, Closed, no failure pending: the zero-round-trip gate
	ep, v uint64
	m     int // 0 closed, 1 open, 2 half-open probing, 3 half-open slot free
	g     uint64
	f     int64
	lf    int64 // last failure, -1 none
	ps    int64 // probe start
	// §9.1 and §9.3.1 (see toolLua): the trip count, when it last closed,
	// the ends of the cooldown c(n) and of a hint or quota (-1 none), and
	// what set the latter (1 a hint, 2 a quota).
	n, ca, bu, hu, hc int64
	pl                int64 // the lease the probe in flight was granted (µs)
}

// leaseEnd is when the probe in flight's lease ends (store µs).
func (mr *toolMirror) leaseEnd() int64 { return mr.ps + mr.pl }

// openUntil is when an open breaker may grant a probe (store µs).
func (mr *toolMirror) openUntil() int64 { return max(mr.bu, mr.hu) }

// toolNumbers are a shared tool breaker's settings as the script takes them,
// replaced whole by Reconfigure.
type toolNumbers struct {
	threshold  int64
	rec, lease int64 // µs
	factor     float64
	maxRec     int64 // µs: the backoff's cap and reset window
	quota      int64 // µs
	args       [6]string
}

// newToolNumbers returns the numbers of bs (validated).
func newToolNumbers(bs breaker.Settings) *toolNumbers {
	rec := cmp.Or(bs.RecoveryDuration, breaker.DefaultRecoveryDuration)
	k := &toolNumbers{
		threshold: int64(cmp.Or(bs.FailureThreshold, breaker.DefaultFailureThreshold)),
		rec:       rec.Microseconds(),
		lease:     cmp.Or(bs.ProbeTimeout, breaker.DefaultProbeTimeout).Microseconds(),
		factor:    max(bs.RecoveryBackoff, 1),
		maxRec:    cmp.Or(bs.MaxRecoveryTimeout, breaker.DefaultMaxRecoveryFactor*rec).Microseconds(),
		quota:     cmp.Or(bs.QuotaCooldown, breaker.DefaultQuotaCooldown).Microseconds(),
	}
	k.args = [6]string{
		strconv.FormatInt(k.threshold, 10), strconv.FormatInt(k.rec, 10), strconv.FormatInt(k.lease, 10),
		strconv.FormatFloat(k.factor, 'g', -1, 64), strconv.FormatInt(k.maxRec, 10), strconv.FormatInt(k.quota, 10),
	}
	return k
}

// cooldown is c(n) of SEMANTICS §9.1 in µs: min(rec × factor^(n−1), maxRec),
// saturating for any n (the float power saturates to +Inf).
func (k *toolNumbers) cooldown(n int64) int64 {
	if n <= 1 || k.factor <= 1 {
		return k.rec
	}
	c := float64(k.rec) * math.Pow(k.factor, float64(n-1))
	if c >= float64(k.maxRec) {
		return k.maxRec
	}
	return int64(c)
}

// transition is one state change waiting for delivery to OnStateChange.
type transition struct{ from, to breaker.State }

// ToolBreaker is a tool circuit breaker (SEMANTICS §1) whose state is shared
// by every process that creates one with the same Store prefix and name.
// Create it with [Store.Tool]. It is used exactly like a [breaker.Breaker]:
// Allow hands out a [Permit] that is settled once. A ToolBreaker is safe for
// concurrent use.
type ToolBreaker struct {
	s        *Store
	name     string
	keys     []string
	ch       string
	nums     atomic.Pointer[toolNumbers]
	onChange func(name string, from, to breaker.State)
	events   notify.Queue[transition]

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
// the breaker.Breaker (docs/FLEET.md), which also tells a slow probe (§9.2):
// to have them, build it with breaker.New and [Store.ToolBackend]; a
// ToolBreaker used directly does not apply them (its Permit has no time to
// first content). The backoff of repeated trips and the rate-limit verdicts
// (§9.1, §9.3.1) are the store's and apply either way.
func (s *Store) Tool(bs breaker.Settings) (*ToolBreaker, error) {
	if err := bs.Validate(); err != nil {
		return nil, err
	}
	key := s.key("tool", bs.Name)
	b := &ToolBreaker{
		s:        s,
		name:     bs.Name,
		keys:     []string{key},
		ch:       key + ":ch",
		onChange: bs.OnStateChange,
	}
	b.nums.Store(newToolNumbers(bs))
	b.quiet = breaker.NewQuiet(s.clock.now, time.Microsecond)
	b.quiet.Publish(0, true)
	b.mirror.Store(&toolMirror{modal: modal[*localTool]{mode: Shared}, quiet: true, lf: -1, bu: -1, hu: -1})
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
	return b.scriptArgs(op, probe, gen, at, trip, "")
}

// scriptArgs runs the script with every argument: hint is the time left
// until a rate limit's hint (µs), or empty. The op "slowprobe" is a success
// with the slow flag (a probe slower than SlowCallAfter).
func (b *ToolBreaker) scriptArgs(op string, probe bool, gen uint64, at int64, trip bool, hint string) ([]int64, error) {
	k := b.nums.Load()
	slow := op == "slowprobe"
	if slow {
		op = "success"
	}
	args := []string{op, k.args[0], k.args[1], k.args[2], b.ch,
		flag(probe), strconv.FormatUint(gen, 10), strconv.FormatInt(at, 10), b.s.clock.arg(), flag(trip),
		k.args[3], k.args[4], k.args[5], hint, flag(slow)}
	v, err := b.s.exec(toolScript, b.keys, args, 7, nil)
	if err != nil {
		return nil, err
	}
	if len(v) < toolReplyLen {
		return nil, errShortReply
	}
	b.apply(replyState(v), nil)
	return v, nil
}

// toolReplyLen is the length of the script's reply; toolStateLen that of a
// state (a notification's fields).
const (
	toolReplyLen = 17
	toolStateLen = 13
)

// replyState returns the state of a script reply: ep, v, m, g, f, lf, ps, n,
// ca, bu, hu, hc, pl.
func replyState(v []int64) []int64 {
	var st [toolStateLen]int64
	copy(st[:7], v[:7])
	copy(st[7:], v[11:17])
	return st[:]
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
	n.n, n.ca, n.bu, n.hu, n.hc, n.pl = st[7], st[8], st[9], st[10], st[11], st[12]
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

// onMessage applies a change notification: "ep v m g f lf ps n ca bu hu hc pl".
func (b *ToolBreaker) onMessage(payload string) {
	var st [toolStateLen]int64
	if !parseInts(payload, st[:]) {
		return
	}
	b.apply(st[:], nil)
}

// sync re-reads the store's state into the mirror (the store wins).
func (b *ToolBreaker) sync(ctx context.Context) error {
	k := b.nums.Load()
	args := []string{"sync", k.args[0], k.args[1], k.args[2], b.ch, "0", "0", "0", b.s.clock.arg(), "0",
		k.args[3], k.args[4], k.args[5], ""}
	before := b.mirror.Load()
	v, err := b.s.run(ctx, toolScript, b.keys, args, 7, nil)
	if err != nil {
		return err
	}
	if len(v) < toolReplyLen {
		return errShortReply
	}
	b.apply(replyState(v), before)
	return nil
}

// down switches to the store-down mode md, seeding a local breaker from the
// mirror for LocalMode.
func (b *ToolBreaker) down(md Mode) {
	b.mu.Lock()
	if n := inMode(b.mirror.Load(), md, b.seed); n != nil {
		b.publish(n)
		return
	}
	b.mu.Unlock()
}

// up goes back to the shared state the last sync read.
func (b *ToolBreaker) up() { b.down(Shared) }

// seed builds the local breaker from the mirror, in local wall-clock ns.
func (b *ToolBreaker) seed(mr *toolMirror) *localTool {
	off := b.s.clock.offset.Load()
	toLocal := func(us int64) int64 { return us*1000 - off }
	id := b.locals.Add(1)
	lt := &localTool{base: localBit | (id&0xffff)<<40, f: mr.f, n: mr.n, ca: toLocal(mr.ca), bu: noUntil, hu: noUntil, hc: mr.hc}
	lt.setNumbers(b.nums.Load())
	lt.g = lt.base + 1
	switch mr.m {
	case 1:
		lt.m, lt.lf = 1, toLocal(mr.lf)
		if mr.bu >= 0 {
			lt.bu = toLocal(mr.bu)
		}
		if mr.hu >= 0 {
			lt.hu = toLocal(mr.hu)
		}
	case 2:
		lt.m, lt.ps, lt.pl = 2, toLocal(mr.ps), mr.pl*1000 // someone else's probe: its lease still runs
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
