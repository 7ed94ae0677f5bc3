package fleet

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/notify"
)

// modelMirror is one immutable view of a shared model breaker. Store times
// are µs since the Unix epoch.
type modelMirror struct {
	modal[*fallback.Manager]

	ep, v, g, ce, pq uint64
	st               fallback.State
	f, s             int
	ta, pst          int64 // trip time (-1 none), probe start
	cen, sh, lf      int64 // cooldown end (0 none), the streak's latest hint and failure time
	cause            fallback.Cause
	act, pr          bool
	att              []int
	dis              []bool
	du               []int64    // each manual disable's end (0: until enabled)
	dexp             int64      // the earliest end of a disable in force (0 none)
	route            int        // Fallback: the active entry, -1 (no chain), -2 (exhausted)
	hr               string     // the latest hold's reason (shown while held)
	dr               []string   // each entry's latest disable's reason (shown while disabled)
	rat              []reasonAt // the state version each reason was written at (the hold's, then the entries')
	trips            int        // SEMANTICS §9.1: the trip count n
	closedAt         int64      // when the state last became Primary (store µs; 0: long ago)
}

// ModelBreaker is a model breaker with a fallback chain (SEMANTICS §3) whose
// state is shared by every process that creates one with the same Store
// prefix and name. Create it with [Store.Model]. It has the methods of
// [fallback.Manager]. A ModelBreaker is safe for concurrent use.
type ModelBreaker struct {
	s        *Store
	name     string
	set      fallback.Settings // Primary and Chain are read from it; the numbers from tune
	tune     atomic.Pointer[modelTune]
	keys     []string
	ch       string
	n        int
	onChange func(fallback.Transition)
	events   notify.Queue[fallback.Transition]
	attached int // Managers attached through ModelBackend (s.mu); -1: made by Store.Model

	mirror atomic.Pointer[modelMirror]
	mu     sync.Mutex
}

// Model returns the shared model breaker named name, configured by fs
// exactly as [fallback.New] would be (the same defaults and validation;
// Settings.Now is not used: shared time is the store's). Every process must
// use the same settings (above all the same chain) for the same name. A
// Store holds one model breaker per name. The failure-rate window, slow
// calls and retry budget of SEMANTICS §8 are kept per process by the
// fallback.Manager (docs/FLEET.md): to have them, build the Manager with
// fallback.New and [Store.ModelBackend]; a ModelBreaker used directly applies
// them only while the store is down (its local manager).
func (s *Store) Model(name string, fs fallback.Settings) (*ModelBreaker, error) {
	return s.model(name, fs, -1)
}

// model is Model, with the breaker's count of attached Managers (-1: made
// by Store.Model, never forgotten) set before it is registered.
func (s *Store) model(name string, fs fallback.Settings, attached int) (*ModelBreaker, error) {
	if _, err := fallback.New(fallback.Settings{Primary: fs.Primary, Chain: fs.Chain,
		TripThreshold: fs.TripThreshold, RecoveryTimeout: fs.RecoveryTimeout,
		RecoverySuccessesNeeded: fs.RecoverySuccessesNeeded, MaxFailCount: fs.MaxFailCount,
		ProbeTimeout: fs.ProbeTimeout, QuotaCooldown: fs.QuotaCooldown, HedgeAfter: fs.HedgeAfter,
		HedgeBudget: fs.HedgeBudget, RecoveryBackoff: fs.RecoveryBackoff,
		MaxRecoveryTimeout: fs.MaxRecoveryTimeout}); err != nil {
		return nil, err // the same validation as fallback.New
	}
	or := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	ord := func(v, def time.Duration) time.Duration {
		if v == 0 {
			return def
		}
		return v
	}
	fs.Chain = append([]string(nil), fs.Chain...)
	fs.TripThreshold = or(fs.TripThreshold, fallback.DefaultTripThreshold)
	fs.RecoverySuccessesNeeded = or(fs.RecoverySuccessesNeeded, fallback.DefaultRecoverySuccessesNeeded)
	fs.MaxFailCount = or(fs.MaxFailCount, fallback.DefaultMaxFailCount)
	fs.RecoveryTimeout = ord(fs.RecoveryTimeout, fallback.DefaultRecoveryTimeout)
	fs.ProbeTimeout = ord(fs.ProbeTimeout, fallback.DefaultProbeTimeout)
	fs.QuotaCooldown = ord(fs.QuotaCooldown, fallback.DefaultQuotaCooldown)
	fs = maxRecovery(fs)
	key := s.key("model", name)
	m := &ModelBreaker{
		s: s, name: name, set: fs, keys: []string{key}, ch: key + ":ch",
		n: len(fs.Chain), onChange: fs.OnTransition, attached: attached,
	}
	m.tune.Store(m.newTune(fs))
	m.mirror.Store(&modelMirror{modal: modal[*fallback.Manager]{mode: Shared}, ta: -1, att: make([]int, m.n), dis: make([]bool, m.n),
		du: make([]int64, m.n), dr: make([]string, m.n), route: m.routeOf(nil, make([]int, m.n), make([]bool, m.n))})
	if err := s.register(m); err != nil {
		return nil, err
	}
	return m, nil
}

// width is the number of integers of the script's state.
func (m *ModelBreaker) width() int { return 18 + 2*m.n }

// Name returns the breaker's name (its key in the store).
func (m *ModelBreaker) Name() string { return m.name }

func (m *ModelBreaker) channel() string { return m.ch }

// routeOf returns the active chain entry, -1 with no chain, -2 when spent.
func (m *ModelBreaker) routeOf(_ *modelMirror, att []int, dis []bool) int {
	if m.n == 0 {
		return -1
	}
	for i := range m.n {
		if !dis[i] && att[i] < m.tuned().set.MaxFailCount {
			return i
		}
	}
	return -2
}

// extra is the part of a script call that carries time and the turn's memory: a failure's hint (store µs, 0
// none) and timeout flag, the turn's probed flag and slow models, and the
// entry a hedge skips.
type extra struct {
	hint   int64
	tmo    bool
	probed bool
	slow   string
	skip   int
	ttl    int64  // hold, disable: µs from the store's now
	reason string // hold, disable
}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// script runs one event. t is the ticket (zero for begin/avail/reset/sync).
func (m *ModelBreaker) script(ctx context.Context, op string, t Turn, kind, flag int, run bool, x extra) ([]int64, error) {
	args := make([]string, 0, 27)
	args = append(args, op)
	tu := m.tuned()
	args = append(args, tu.static[:]...)
	args = append(args, strconv.FormatUint(t.ep, 10), strconv.FormatUint(t.gen, 10), strconv.FormatUint(t.ce, 10),
		strconv.FormatUint(t.probe, 10), strconv.Itoa(t.entry), strconv.Itoa(kind), strconv.Itoa(flag), m.s.clock.arg())
	args = append(args, tu.quota, strconv.FormatInt(x.hint, 10), b01(x.tmo), strconv.FormatInt(t.issued, 10),
		b01(x.probed), x.slow, strconv.Itoa(x.skip), strconv.FormatInt(x.ttl, 10), x.reason, tu.bkoff[0], tu.bkoff[1])
	width := m.width()
	var (
		v   []int64
		err error
	)
	before := m.mirror.Load()
	if run {
		v, err = m.s.run(ctx, modelScript, m.keys, args, width)
	} else {
		v, err = m.s.exec(modelScript, m.keys, args, width)
	}
	if err != nil {
		return nil, err
	}
	if len(v) != width+4+m.n+2 {
		return nil, errShortReply
	}
	du, k := v[width+4:width+4+m.n], v[width+4+m.n:]
	if run {
		m.apply(v[:width], du, k, before, "")
	} else {
		m.apply(v[:width], du, k, nil, "")
	}
	return v, nil
}

// apply stores a state into the mirror if newer (see ToolBreaker.apply),
// with the disables' ends du (nil: none), the trip count and closedAt k
// (nil: an older process's message: kept) and the reason a change message
// carries (note: "item reason"; "" none).
func (m *ModelBreaker) apply(x, du, k []int64, since *modelMirror, note string) {
	m.mu.Lock()
	cur := m.mirror.Load()
	ep, v := uint64(x[0]), uint64(x[1])
	if (since == nil || since != cur) && ep == cur.ep && v <= cur.v {
		nm := *cur // an older state may still carry a reason newer than the mirror's
		if note != "" && m.setReason(&nm, note, reasonAt{ep, v}) {
			m.publish(&nm, cur)
			return
		}
		m.mu.Unlock()
		return
	}
	nm := *cur
	nm.ep, nm.v, nm.st, nm.g, nm.ce = ep, v, fallback.State(x[2]), uint64(x[3]), uint64(x[4])
	nm.f, nm.s, nm.ta, nm.act, nm.pr, nm.pst, nm.pq = int(x[5]), int(x[6]), x[7], x[8] != 0, x[9] != 0, x[10], uint64(x[11])
	nm.att, nm.dis = make([]int, m.n), make([]bool, m.n)
	for i := range m.n {
		nm.att[i], nm.dis[i] = int(x[12+i]), x[12+m.n+i] != 0
	}
	w := 14 + 2*m.n
	nm.cen, nm.cause, nm.sh, nm.lf = x[w], fallback.Cause(x[w+1]), x[w+2], x[w+3]
	nm.du, nm.dexp = make([]int64, m.n), 0
	for i := range du {
		if nm.du[i] = du[i]; nm.dis[i] && nm.du[i] > 0 && (nm.dexp == 0 || nm.du[i] < nm.dexp) {
			nm.dexp = nm.du[i]
		}
	}
	nm.route = m.routeOf(&nm, nm.att, nm.dis)
	if len(k) == 2 {
		nm.trips, nm.closedAt = int(k[0]), k[1]
	}
	if note != "" {
		m.setReason(&nm, note, reasonAt{ep, v})
	}
	m.publish(&nm, cur)
}

// publish stores nm, queues the transition it makes, releases m.mu and
// delivers callbacks. m.mu must be held.
func (m *ModelBreaker) publish(nm, cur *modelMirror) {
	m.mirror.Store(nm)
	if m.onChange != nil && nm.mode == Shared && cur.mode == Shared {
		fromModel, toModel := m.stateModel(cur), m.stateModel(nm)
		if cur.st != nm.st || (nm.st == fallback.Fallback && fromModel != toModel) {
			at := time.Now()
			if nm.st == fallback.Fallback && cur.st != fallback.Fallback && nm.ta >= 0 {
				at = m.s.clock.toLocal(nm.ta)
			}
			m.events.Push(fallback.Transition{From: cur.st, To: nm.st, FromModel: fromModel, ToModel: toModel, At: at})
		}
	}
	m.mu.Unlock()
	if m.onChange != nil {
		m.events.Drain(m.onChange)
	}
}

// stateModel is the model a mirror's state routes to, as Transitions name it.
func (m *ModelBreaker) stateModel(mr *modelMirror) string {
	if mr.st != fallback.Fallback {
		return m.set.Primary
	}
	switch {
	case mr.route == -1 && mr.cause == fallback.CauseManual:
		return "" // held with no chain: routed nowhere, as fallback names it
	case mr.route == -1:
		return m.set.Primary
	case mr.route == -2:
		return ""
	}
	return m.set.Chain[mr.route]
}

// onMessage applies a change notification: the state, space-separated,
// then optionally lines with the disables' ends, the note, and the trip
// count with closedAt (see modelLua).
func (m *ModelBreaker) onMessage(payload string) {
	payload, rest, _ := strings.Cut(payload, "\n")
	d, note, _ := strings.Cut(rest, "\n")
	x := make([]int64, m.width())
	if !parseInts(payload, x) {
		return
	}
	var du []int64
	if d != "" {
		if du = make([]int64, m.n); !parseInts(d, du) {
			return
		}
	}
	// The last line is the trip count and closedAt (a reason may hold a
	// newline; those two never do); a message without it keeps them.
	var k []int64
	if i := strings.LastIndexByte(note, '\n'); i >= 0 {
		if k = make([]int64, 2); parseInts(note[i+1:], k) {
			note = note[:i]
		} else {
			k = nil
		}
	}
	m.apply(x, du, k, nil, note)
}

// sync re-reads the store's state (the store wins).
func (m *ModelBreaker) sync(ctx context.Context) error {
	if _, err := m.script(ctx, "sync", Turn{entry: -1}, 0, 0, true, extra{}); err != nil {
		return err
	}
	return m.readReasons(ctx)
}

// down switches to the store-down mode md; for LocalMode it seeds a local
// fallback.Manager from the mirror: the same state and trip time (chain
// budgets start afresh).
func (m *ModelBreaker) down(md Mode) {
	m.mu.Lock()
	cur := m.mirror.Load()
	if nm := inMode(cur, md, m.seed); nm != nil {
		m.publish(nm, cur)
		return
	}
	m.mu.Unlock()
}

// up goes back to the shared state.
func (m *ModelBreaker) up() { m.down(Shared) }

// seed builds the local manager: tripped at the mirror's trip time when the
// mirror is in Fallback or Recovering, with the manual disables.
func (m *ModelBreaker) seed(mr *modelMirror) *fallback.Manager {
	var seedAt atomic.Pointer[time.Time]
	if mr.st != fallback.Primary && mr.ta >= 0 {
		t := m.s.clock.toLocal(mr.ta)
		seedAt.Store(&t)
	}
	ls := m.tuned().set
	if m.onChange != nil {
		ls.OnTransition = func(t fallback.Transition) {
			if seedAt.Load() == nil { // the seeding trip is not news
				m.onChange(t)
			}
		}
	}
	ls.Now = func() time.Time {
		if t := seedAt.Load(); t != nil {
			return *t
		}
		return time.Now()
	}
	lm, err := fallback.New(ls)
	if err != nil {
		return nil // cannot happen: Model validated the settings
	}
	for i, d := range mr.dis {
		if d {
			var until time.Time
			if mr.du[i] > 0 {
				until = m.s.clock.toLocal(mr.du[i])
			}
			_ = lm.Disable(m.set.Chain[i], until, mr.dr[i])
		}
	}
	if n := m.tuned().viewTrips(mr, m.storeMicros()); mr.st == fallback.Primary && n > 0 {
		m.seedTrips(lm, &seedAt, n, m.s.clock.toLocal(mr.closedAt))
		seedAt.Store(nil)
	}
	if tripped := seedAt.Load(); tripped != nil {
		m.seedTrips(lm, &seedAt, mr.trips-1, *tripped)
		seedAt.Store(tripped)
		var hint time.Time // the shared cooldown's end holds the local one too
		if mr.cen > 0 {
			hint = m.s.clock.toLocal(mr.cen)
		}
		for range ls.TripThreshold {
			t, err := lm.Begin()
			if err != nil {
				break
			}
			t.Fail(fallback.Failure{Hint: hint})
		}
		if mr.st == fallback.Fallback && mr.cause == fallback.CauseManual {
			lm.Hold(hint, mr.hr) // the fleet's hold holds the local manager until the same end
		}
		seedAt.Store(nil)
	}
	return lm
}
