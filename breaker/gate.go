package breaker

import (
	"math"

	"github.com/loopctl/loopctl-go/internal/ratewindow"
)

// Allow is the mutating gate. In Closed it returns a permit at once. In Open it
// refuses until RecoveryDuration has passed since the last failure; the first
// call after that moves the breaker to HalfOpen and receives the probe permit
// ([Permit.IsProbe] is true). While a probe is in flight every other call is
// refused; once the probe's lease has expired, the breaker re-opens with the
// last failure backdated to the lease's end, and the same call may receive a
// fresh probe if the cooldown counted from the lease's end has passed too.
//
// A refusal returns a zero Permit and an [*OpenError] (errors.Is(err, ErrOpen)
// is true). The error may be shared with other refusals: do not modify it.
// A refusal changes nothing, beyond applying a lapsed probe lease (which the
// pure reads already report).
func (b *Breaker) Allow() (Permit, error) {
	w := b.word.Load()
	switch mode(w & modeMask) {
	case mClosed:
		if w&busyBit == 0 {
			// No clock read (§8.4): the generation orders the call's start,
			// and its beginning is a lower bound of that start.
			return Permit{b: b, gen: w >> genShift, at: b.genAt.Load()}, nil
		}
	case mOpen, mHalfProbe:
		now := b.now()
		if w, until, ok := b.load(); ok && now < until {
			if m := mode(w & modeMask); m == mOpen || m == mHalfProbe {
				return Permit{}, b.refusal(m.state(), until-now)
			}
		}
	}
	return b.allowSlow()
}

// allowSlow is Allow under the lock.
func (b *Breaker) allowSlow() (Permit, error) {
	if b.shared != nil {
		return b.sharedAllow()
	}
	b.mu.Lock()
	now := b.nowLocked()
	b.expire(now)
	var (
		probe bool
		st    State
		wait  int64
	)
	switch b.mode {
	case mClosed:
	case mOpen:
		if next := b.openUntil(); now < next {
			st, wait = Open, next-now
			break
		}
		b.probeStart, b.probeLease = now, b.lease
		b.setMode(mHalfProbe)
		probe = true
	case mHalfFree:
		b.probeStart, b.probeLease = now, b.lease
		b.setMode(mHalfProbe) // a new generation: older probe permits cannot act on this probe
		probe = true
	case mHalfProbe: // lease live: expire would have re-opened it otherwise
		st, wait = HalfOpen, b.leaseEnd()-now
	}
	b.publish()
	p := Permit{b: b, gen: b.gen, at: now, probe: probe}
	if probe {
		p.at = b.leaseEnd()
	}
	b.unlock()
	if wait > 0 {
		return Permit{}, b.refusal(st, wait)
	}
	return p, nil
}

// success settles p as a success with no time to first content (past the
// fast path of Permit.Success, which stays inlinable by calling a function
// that takes nothing and is not inlined itself).
//
//go:noinline
func (p Permit) success() { p.successAfter(-1) }

// successAfter settles p as a call whose first content came ttfc ns after
// its start (negative: not known).
func (p Permit) successAfter(ttfc int64) {
	b := p.b
	if b.shared != nil {
		b.sharedSuccess(p, ttfc)
		return
	}
	w := b.word.Load()
	switch mode(w & modeMask) {
	case mClosed:
		if w&rateBit != 0 {
			if r := b.rate.Load(); r != nil && r.recordSuccess(b.now(), ttfc) {
				b.slowTrip(p) // §8.2
				return
			}
		}
		if w&(failBit|busyBit) == 0 {
			return // nothing would change
		}
	case mOpen:
		return // ignored: the call started before the trip
	case mHalfFree:
		if !p.probe {
			return // only the probe's verdict can close a half-open breaker
		}
	}
	// mHalfProbe: even an ignored success applies a lapsed lease, so that its
	// state change is reported when the breaker is touched.
	b.mu.Lock()
	now := b.nowLocked()
	b.expire(now)
	switch b.mode {
	case mClosed:
		if b.failures > 0 { // a counted success: it resets a nonzero count
			b.prove(p.gen)
			b.failures = 0
			b.gen++ // calls that start from now on start after it
		}
	case mHalfProbe:
		if p.probe && p.gen == b.gen {
			if slow := b.slowPass.Load(); slow > 0 && ttfc > slow {
				b.slowProbe(now) // §9.2: recovery must be proven fast
				break
			}
			b.prove(p.gen)
			b.failures = 0
			b.probeStart = 0
			b.closedAt = now
			b.setMode(mClosed)
		}
	}
	b.unlock()
}

// slowProbe re-opens a half-open breaker whose probe succeeded slower than
// SlowCallAfter (§9.2): a failure for the breaker only (the caller was
// served), dated now, a re-trip (n + 1). b.mu must be held.
func (b *Breaker) slowProbe(now int64) {
	if b.failures == 0 {
		b.gen++
	}
	b.failures++
	if !b.hasFailure || now > b.lastFailure {
		b.lastFailure = now
	}
	b.hasFailure = true
	b.trip(now)
}

// prove records a counted success of a call that started in generation gen:
// failures of calls that started in an earlier generation are stale. b.mu
// must be held.
func (b *Breaker) prove(gen uint64) { b.proven = max(b.proven, gen) }

// failure settles p as a failure: fresh bad news in every state, unless it is
// stale (a counted success's call started after it). A plain failure is dated
// now; a timeout of a call that ran ran ns at now − ran, or when ran is
// negative (not known) at the earlier of now and p.at (a non-probe permit's
// generation start, a probe's lease end; a probe ignores ran). The last
// failure never moves back. In Closed the failure goes into the rate window,
// which may trip the breaker as the consecutive count does (§8.1).
func (b *Breaker) failure(p Permit, timeout bool, ran int64) {
	if b.shared != nil {
		b.sharedFailure(p, timeout)
		return
	}
	gen, at := p.gen, int64(math.MaxInt64)
	b.mu.Lock()
	now := b.nowLocked()
	switch {
	case !timeout:
	case ran >= 0 && !p.probe:
		at = satAdd(now, -ran)
	default:
		at = p.at
	}
	b.expire(now)
	if gen < b.proven {
		b.unlock() // stale: changes nothing
		return
	}
	if b.failures == 0 {
		b.gen++ // the first failure after a clean state: later calls start after it
	}
	b.failures++
	if t := min(now, at); !b.hasFailure || t > b.lastFailure {
		b.lastFailure = t
	}
	b.hasFailure = true
	switch b.mode {
	case mClosed:
		if b.failures >= b.threshold || b.rateTrips(now) {
			b.trip(now)
		}
	case mHalfProbe, mHalfFree:
		b.trip(now)
	case mOpen:
		b.restart()
	}
	b.unlock()
}

// rateTrips records a failure in Closed at now in the rate window, if there
// is one, and reports whether it trips (§8.1). b.mu must be held.
func (b *Breaker) rateTrips(now int64) bool {
	r := b.rate.Load()
	return r != nil && r.win.Record(now, ratewindow.Failure, r.rule)
}

// cancel settles p with no verdict, freeing the probe slot if p holds it.
func (b *Breaker) cancel(p Permit) {
	if !p.probe && mode(b.word.Load()&modeMask) != mHalfProbe {
		return // nothing to release and no lease that may have lapsed
	}
	if b.shared != nil {
		b.sharedSettle(p, OutcomeCancel)
		return
	}
	b.mu.Lock()
	b.expire(b.nowLocked())
	if p.probe && b.mode == mHalfProbe && p.gen == b.gen {
		b.probeStart = 0
		b.setMode(mHalfFree)
	}
	b.unlock()
}

// Reset returns the breaker to Closed by hand, as if it had never failed: the
// consecutive-failure count, the last failure, any probe in flight and the
// trip count n (§9.1) are cleared. OnStateChange is called if the state changed (after the re-opening
// of a lapsed probe lease, which Reset applies first, as every call does).
// Permits issued before Reset may still be settled: their failures are stale
// and change nothing, as if a success had been counted just before Reset; a
// success counts as on any closed breaker, and an old probe's success can no
// longer close anything.
func (b *Breaker) Reset() {
	if b.shared != nil {
		b.shared.Reset()
		return
	}
	b.mu.Lock()
	now := b.nowLocked()
	b.expire(now) // a lapsed lease is reported first, as on every touch
	b.failures = 0
	b.hasFailure = false
	b.lastFailure = 0
	b.probeStart = 0
	b.trips, b.closedAt = 0, now
	b.baseUntil, b.hintUntil = noUntil, noUntil
	b.setMode(mClosed)
	b.proven = b.gen
	b.unlock()
}
