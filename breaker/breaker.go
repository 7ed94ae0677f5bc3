package breaker

import (
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/internal/notify"
)

// State is the state of a [Breaker].
type State int

// The states of a [Breaker].
const (
	// Closed: calls flow and consecutive failures are counted.
	Closed State = iota
	// Open: calls are refused until the cooldown has passed.
	Open
	// HalfOpen: one probe call tests whether the tool recovered.
	HalfOpen
)

// String returns "closed", "open" or "half-open".
func (s State) String() string {
	switch s {
	case Closed:
		return "closed"
	case Open:
		return "open"
	case HalfOpen:
		return "half-open"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// mode is the internal state: HalfOpen is split by whether the probe slot is held.
type mode uint64

const (
	mClosed    mode = iota // Closed
	mOpen                  // Open
	mHalfProbe             // HalfOpen, a probe in flight (its lease may have expired)
	mHalfFree              // HalfOpen, probe slot free (the holder cancelled)
)

// Layout of Breaker.word, the published state read by the lock-free paths.
const (
	modeMask = 3
	failBit  = 1 << 2 // the consecutive-failure count is not zero
	busyBit  = 1 << 3 // a writer is updating until: readers take the slow path
	rateBit  = 1 << 4 // a rate window is on: every success in Closed is recorded
	genShift = 5
	millis   = int64(time.Millisecond)
)

// transition is one state change waiting for delivery to OnStateChange.
type transition struct{ from, to State }

// Breaker is a circuit breaker for one tool. Create it with [New]. A Breaker is
// safe for concurrent use.
//
// A nil *Breaker (what health.Registry.Breaker returns for a tool it has never
// seen) reads as a fresh closed breaker: its pure reads ([Breaker.State],
// [Breaker.WouldAllow], [Breaker.RetryIn], [Breaker.Snapshot],
// [Breaker.Name]) work and report Closed with no failures. Its gate and
// [Breaker.Reset] must not be called.
type Breaker struct {
	// Published state, read without the lock. word packs mode, failBit,
	// busyBit and the generation; until is, in Open, when a probe may be
	// granted and, with a probe in flight, when its lease ends (clock offsets
	// in nanoseconds since epoch). Writers follow a seqlock protocol: they set
	// busyBit, store until, then store a word with a new generation. genAt is
	// when the generation of word began (a clock offset read before it was
	// published): a lower bound of the start of every call granted in it.
	word    atomic.Uint64
	until   atomic.Int64
	genAt   atomic.Int64
	lastErr atomic.Pointer[OpenError] // the last refusal, reused while it still says the truth

	name      string
	threshold int
	recovery  int64 // ns
	lease     int64 // ns
	nowFn     func() time.Time
	epoch     time.Time
	epochSec  int64 // epoch's Unix seconds and nanoseconds, for now()
	epochNsec int64
	onChange  func(name string, from, to State)
	deliver   func(transition)
	events    notify.Queue[transition]
	shared    Shared               // Settings.Backend's state; nil: the state below
	quiet     *Quiet               // shared's published word, if it has one
	rate      atomic.Pointer[rate] // the §8.1/§8.2 window; nil: off (swapped by Reconfigure)
	slowPass  atomic.Int64         // SlowCallAfter (ns): a probe slower than this fails (§9.2); 0: off

	mu          sync.Mutex
	mode        mode
	gen         uint64
	failures    int
	hasFailure  bool
	lastFailure int64  // ns since epoch
	probeStart  int64  // ns since epoch; meaningful in mHalfProbe
	probeLease  int64  // the lease the probe in flight was granted (ns): Reconfigure does not move it
	proven      uint64 // generation of the latest-starting counted success: older failures are stale
	clockAt     int64  // the latest clock reading under mu: genAt for a generation published now

	// Repeated trips (§9.1) and the member verdicts (§9.3.1), under mu. In
	// Open a probe may be granted from max(baseUntil, hintUntil) on.
	back      backoff
	trips     int   // n: the openings since the count last reset
	closedAt  int64 // when the breaker last entered Closed (ns since epoch)
	baseUntil int64 // the end of the cooldown c(n) from the last failure; noUntil: none
	hintUntil int64 // the end a hint or a quota set; noUntil: none
	hintCause Cause // CauseHint or CauseQuota, for hintUntil
}

// New returns a closed breaker configured by s. Invalid settings (see
// [Settings.Validate]) are an error (a [*SettingsError] naming the field).
func New(s Settings) (*Breaker, error) {
	b := new(Breaker)
	if err := b.Init(s); err != nil {
		return nil, err
	}
	return b, nil
}

// Init makes the zero Breaker b a closed breaker configured by s, exactly as
// [New] would, so that a Breaker can be embedded by value in a larger struct
// (for instance next to per-tool statistics). Call it once, on a zero Breaker,
// before any other method and before b is shared; a Breaker must not be copied
// after Init. Invalid settings are an error, as for New, and leave b unusable;
// Init on a Breaker that is already initialized is an error and changes nothing.
func (b *Breaker) Init(s Settings) error {
	if b.word.Load() != 0 {
		return errors.New("breaker: Init on a breaker that is already initialized")
	}
	if err := s.Validate(); err != nil {
		return err
	}
	b.name = s.Name
	b.threshold = s.FailureThreshold
	b.recovery = int64(s.RecoveryDuration)
	b.lease = int64(s.ProbeTimeout)
	b.nowFn = s.Now
	b.onChange = s.OnStateChange
	if b.threshold == 0 {
		b.threshold = DefaultFailureThreshold
	}
	if b.recovery == 0 {
		b.recovery = int64(DefaultRecoveryDuration)
	}
	if b.lease == 0 {
		b.lease = int64(DefaultProbeTimeout)
	}
	if b.nowFn != nil {
		b.epoch = b.nowFn()
		b.epochSec, b.epochNsec = b.epoch.Unix(), int64(b.epoch.Nanosecond())
	} else {
		b.epoch = time.Now()
	}
	if b.onChange != nil {
		b.deliver = func(t transition) { b.onChange(b.name, t.from, t.to) }
	}
	b.gen = 1
	b.rate.Store(newRate(s))
	b.back = newBackoff(s, b.recovery)
	b.slowPass.Store(int64(s.SlowCallAfter))
	b.baseUntil, b.hintUntil = noUntil, noUntil
	if s.Backend != nil {
		sh, err := s.Backend.Attach(b.attachSettings(s))
		if err != nil {
			return err
		}
		b.shared = sh
		if qs, ok := sh.(QuietSource); ok {
			b.quiet = qs.Quiet()
		}
		b.word.Store(sharedWord)
		return nil
	}
	b.word.Store(b.gen<<genShift | b.rateBits())
	return nil
}

// attachSettings is s as a Backend's Attach sees it: with a rate window,
// OnStateChange also clears the window on every transition out of (and
// into) Closed that the backend reports (§8.1), before the caller's callback.
func (b *Breaker) attachSettings(s Settings) Settings {
	if b.rate.Load() == nil {
		return s
	}
	user := s.OnStateChange
	s.OnStateChange = func(name string, from, to State) {
		if r := b.rate.Load(); r != nil && (from == Closed || to == Closed) {
			r.win.Reset()
		}
		if user != nil {
			user(name, from, to)
		}
	}
	return s
}

// Name returns Settings.Name ("" for a nil Breaker).
func (b *Breaker) Name() string {
	if b == nil {
		return ""
	}
	return b.name
}

// now reads the clock as nanoseconds since b.epoch. Without Settings.Now it
// uses only the monotonic clock, which is cheaper than a full time.Now. With
// Settings.Now it measures on the wall (Unix) values of the times Now returns,
// which for times within ±136 years of the first reading is cheaper than
// time.Time.Sub (and saturates like it beyond).
func (b *Breaker) now() int64 {
	if b.nowFn == nil {
		return int64(time.Since(b.epoch))
	}
	t := b.nowFn()
	if s := t.Unix() - b.epochSec; s > -1<<32 && s < 1<<32 {
		return s*1e9 + int64(t.Nanosecond()) - b.epochNsec
	}
	return int64(t.Sub(b.epoch))
}

// nowLocked reads the clock under b.mu and remembers the reading, which dates
// a generation published before b.mu is released. b.mu must be held.
func (b *Breaker) nowLocked() int64 {
	b.clockAt = b.now()
	return b.clockAt
}

// at converts a clock offset back to a time.Time.
func (b *Breaker) at(off int64) time.Time { return b.epoch.Add(time.Duration(off)) }

// setMode changes the state, bumps the generation and queues the callback.
// b.mu must be held.
func (b *Breaker) setMode(m mode) {
	from, to := b.mode.state(), m.state()
	b.mode = m
	b.gen++
	if r := b.rate.Load(); r != nil && (from == Closed || to == Closed) {
		r.win.Reset() // §8.1: every transition out of Closed clears it (and Reset)
	}
	if from != to && b.onChange != nil {
		b.events.Push(transition{from, to})
	}
}

// state maps an internal mode to its public State.
func (m mode) state() State {
	switch m {
	case mClosed:
		return Closed
	case mOpen:
		return Open
	}
	return HalfOpen
}

// expire applies a lazily expired probe lease at clock offset now: the breaker
// re-opens with lastFailure backdated to the lease's end, a re-trip (n + 1,
// the cooldown c(n) from the lease's end). b.mu must be held.
func (b *Breaker) expire(now int64) {
	if b.mode == mHalfProbe && now >= b.leaseEnd() {
		b.lastFailure = b.leaseEnd()
		b.hasFailure = true
		b.trip(now)
	}
}

// untilFor returns the published deadline for the current state. b.mu must be held.
func (b *Breaker) untilFor() int64 {
	switch b.mode {
	case mOpen:
		return b.openUntil()
	case mHalfProbe:
		return b.leaseEnd()
	}
	return 0
}

// leaseEnd is when the probe in flight's lease ends. b.mu must be held.
func (b *Breaker) leaseEnd() int64 { return satAdd(b.probeStart, b.probeLease) }

// publish stores the current state for the lock-free readers. b.mu must be held.
func (b *Breaker) publish() {
	old := b.word.Load()
	u := b.untilFor()
	if u != b.until.Load() {
		if b.gen == old>>genShift {
			b.gen++ // readers must see a new word whenever until changes
		}
		b.word.Store(old | busyBit)
		b.until.Store(u)
	}
	w := b.gen<<genShift | uint64(b.mode) | b.rateBits()
	if b.failures > 0 {
		w |= failBit
	}
	if w != old {
		if w>>genShift != old>>genShift {
			b.genAt.Store(b.clockAt)
		}
		b.word.Store(w)
	}
}

// unlock publishes the state, releases b.mu and delivers queued callbacks.
func (b *Breaker) unlock() {
	b.publish()
	b.mu.Unlock()
	if b.onChange != nil {
		b.events.Drain(b.deliver)
	}
}

// load returns a consistent (word, until) pair read without the lock, and
// false if a writer was busy (the caller should then take the lock).
func (b *Breaker) load() (w uint64, until int64, ok bool) {
	w = b.word.Load()
	if w&busyBit != 0 {
		return 0, 0, false
	}
	until = b.until.Load()
	return w, until, b.word.Load() == w
}

// refusal returns the *OpenError for a refusal in state st that may be retried
// in d nanoseconds, reusing the last one when it says the same thing.
func (b *Breaker) refusal(st State, d int64) *OpenError {
	// The last error fits if roundUpMillis(d) == last.RetryIn: for RetryIn a
	// whole number of milliseconds (every result up to maxRounded is), that is
	// RetryIn-1ms < d <= RetryIn, checked without a division; beyond
	// maxRounded, d is not rounded.
	if e := b.lastErr.Load(); e != nil && e.State == st {
		if r := int64(e.RetryIn); d == r || r <= maxRounded && d <= r && d > r-millis {
			return e
		}
	}
	e := &OpenError{Name: b.name, State: st, RetryIn: time.Duration(roundUpMillis(d))}
	b.lastErr.Store(e)
	return e
}

// maxRounded is the largest result of roundUpMillis that is a whole number of
// milliseconds; larger ones are returned unrounded.
const maxRounded = math.MaxInt64 / millis * millis

// roundUpMillis rounds d (nanoseconds) up to a whole millisecond; d <= 0 gives 0.
func roundUpMillis(d int64) int64 {
	if d <= 0 {
		return 0
	}
	q := d / millis
	if d%millis != 0 {
		q++
	}
	if q > math.MaxInt64/millis {
		return d
	}
	return q * millis
}

// satAdd returns a+b, saturating instead of overflowing.
func satAdd(a, b int64) int64 {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return s
}
