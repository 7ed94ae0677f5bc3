package breaker

import (
	"math"
	"time"
)

// Snapshot is a consistent view of a [Breaker], as returned by
// [Breaker.Snapshot]. It is comparable with ==.
type Snapshot struct {
	// State is the state, with an expired probe lease reported as Open.
	State State
	// ConsecutiveFailures counts failures since the last counted success.
	ConsecutiveFailures int
	// LastFailure is the time of the last failure (for an expired lease: the
	// lease's end); zero if there has been none.
	LastFailure time.Time
	// ProbeStartedAt is when the probe in flight was granted; zero if no probe
	// is in flight.
	ProbeStartedAt time.Time
	// Trips is the trip count n of SEMANTICS §9.1: the openings since the
	// count last reset (a trip from Closed, a failed, slow or lapsed probe, a
	// straggler's failure while HalfOpen; not an opening by a hint or a
	// quota). It reads 0 once the breaker has been closed for
	// MaxRecoveryTimeout, and after Reset; it is kept with the backoff off.
	Trips int
	// OpenUntil is, while Open, when a probe may be granted (the cooldown's
	// end); zero in any other state.
	OpenUntil time.Time
	// Cause says, while Open, why the cooldown ends at OpenUntil; the zero
	// Cause (CauseRecoveryTimeout) in any other state.
	Cause Cause
}

// view is the state as of clock offset now, with lazy transitions applied but
// not stored.
type view struct {
	mode                 mode
	failures             int
	hasFailure           bool
	lastFailure          int64
	probeStart           int64
	probeLease           int64
	trips                int
	baseUntil, hintUntil int64
	hintCause            Cause
}

// viewAt returns the state as of now without changing anything: a lapsed
// lease re-opens (a re-trip: n + 1, the cooldown c(n) from the lease's end),
// and a breaker closed for MaxRecoveryTimeout reports n = 0. b.mu must be held.
func (b *Breaker) viewAt(now int64) view {
	v := view{b.mode, b.failures, b.hasFailure, b.lastFailure, b.probeStart, b.probeLease,
		b.trips, b.baseUntil, b.hintUntil, b.hintCause}
	switch {
	case v.mode == mHalfProbe && now >= b.leaseEnd():
		v.mode, v.hasFailure, v.lastFailure = mOpen, true, b.leaseEnd()
		v.trips = min(v.trips+1, math.MaxInt32)
		v.baseUntil = satAdd(v.lastFailure, b.back.cooldown(b.recovery, v.trips))
		v.hintUntil = noUntil
	case v.mode == mClosed && now-b.closedAt >= b.back.max:
		v.trips = 0
	}
	return v
}

// wait returns how long (in ns) until the gate would grant a call; 0 if now.
func (b *Breaker) wait(v view, now int64) int64 {
	switch v.mode {
	case mOpen:
		return max(0, max(v.baseUntil, v.hintUntil)-now)
	case mHalfProbe:
		return max(0, satAdd(v.probeStart, v.probeLease)-now)
	}
	return 0
}

// WouldAllow reports whether [Breaker.Allow] would grant a call at this
// instant, without changing anything (it never takes the probe slot). At every
// instant it equals the answer of an immediately following Allow. A nil
// Breaker would allow.
func (b *Breaker) WouldAllow() bool {
	if b == nil {
		return true
	}
	w := b.word.Load()
	switch mode(w & modeMask) {
	case mClosed, mHalfFree:
		if w&busyBit == 0 {
			return true
		}
	default:
		now := b.now()
		if w, until, ok := b.load(); ok {
			switch mode(w & modeMask) {
			case mClosed, mHalfFree:
				return true
			case mOpen:
				return now >= until
			case mHalfProbe: // a live lease; a lapsed one re-opens with c(n + 1), below
				if now < until {
					return false
				}
			}
		}
	}
	return b.RetryIn() == 0
}

// RetryIn returns how long until the gate may grant a call, rounded up to a
// whole millisecond: 0 when [Breaker.WouldAllow] is true. It is pure.
func (b *Breaker) RetryIn() time.Duration {
	if b == nil {
		return 0
	}
	if b.shared != nil {
		return b.shared.RetryIn()
	}
	b.mu.Lock()
	now := b.now()
	v := b.viewAt(now)
	b.mu.Unlock()
	return time.Duration(roundUpMillis(b.wait(v, now)))
}

// State returns the current state without changing anything. A half-open
// breaker whose probe lease has expired reads as Open. A nil Breaker reads
// as Closed.
func (b *Breaker) State() State {
	if b == nil {
		return Closed
	}
	w := b.word.Load()
	if w&busyBit == 0 {
		switch m := mode(w & modeMask); m {
		case mHalfProbe:
			now := b.now()
			if w2, until, ok := b.load(); ok && w2 == w {
				if now >= until {
					return Open
				}
				return HalfOpen
			}
		default:
			return m.state()
		}
	}
	if b.shared != nil {
		return b.shared.State()
	}
	b.mu.Lock()
	st := b.viewAt(b.now()).mode.state()
	b.mu.Unlock()
	return st
}

// Snapshot returns a consistent view of the breaker without changing anything.
// A half-open breaker whose probe lease has expired reads as Open with
// LastFailure at the lease's end, exactly as the next call would find it. A
// nil Breaker gives the zero Snapshot (Closed, no failures).
func (b *Breaker) Snapshot() Snapshot {
	if b == nil {
		return Snapshot{}
	}
	if b.shared != nil {
		return b.shared.Snapshot()
	}
	b.mu.Lock()
	v := b.viewAt(b.now())
	cause := b.causeOf(v)
	b.mu.Unlock()
	s := Snapshot{State: v.mode.state(), ConsecutiveFailures: v.failures, Trips: v.trips}
	if v.mode == mOpen {
		s.OpenUntil, s.Cause = b.at(max(v.baseUntil, v.hintUntil)), cause
	}
	if v.hasFailure {
		s.LastFailure = b.at(v.lastFailure)
	}
	if v.mode == mHalfProbe {
		s.ProbeStartedAt = b.at(v.probeStart)
	}
	return s
}
