package breaker

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
			return Permit{b: b, gen: w >> genShift}, nil
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
	b.mu.Lock()
	now := b.now()
	b.expire(now)
	var (
		probe bool
		st    State
		wait  int64
	)
	switch b.mode {
	case mClosed:
	case mOpen:
		if next := satAdd(b.lastFailure, b.recovery); now < next {
			st, wait = Open, next-now
			break
		}
		b.probeStart = now
		b.setMode(mHalfProbe)
		probe = true
	case mHalfFree:
		b.probeStart = now
		b.setMode(mHalfProbe) // a new generation: older probe permits cannot act on this probe
		probe = true
	case mHalfProbe: // lease live: expire would have re-opened it otherwise
		st, wait = HalfOpen, satAdd(b.probeStart, b.lease)-now
	}
	b.publish()
	p := Permit{b: b, gen: b.gen, probe: probe}
	if probe {
		p.end = satAdd(b.probeStart, b.lease)
	}
	b.unlock()
	if wait > 0 {
		return Permit{}, b.refusal(st, wait)
	}
	return p, nil
}

// success settles p as a success (past the fast path of Permit.Success).
func (p Permit) success() {
	b := p.b
	w := b.word.Load()
	switch mode(w & modeMask) {
	case mClosed:
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
	b.expire(b.now())
	switch b.mode {
	case mClosed:
		b.failures = 0
	case mHalfProbe:
		if p.probe && p.gen == b.gen {
			b.failures = 0
			b.probeStart = 0
			b.setMode(mClosed)
		}
	}
	b.unlock()
}

// failure settles a permit as a failure: fresh bad news in every state.
func (b *Breaker) failure() {
	b.mu.Lock()
	now := b.now()
	b.expire(now)
	b.failures++
	b.hasFailure = true
	b.lastFailure = now
	switch b.mode {
	case mClosed:
		if b.failures >= b.threshold {
			b.setMode(mOpen)
		}
	case mHalfProbe, mHalfFree:
		b.probeStart = 0
		b.setMode(mOpen)
	}
	b.unlock()
}

// cancel settles p with no verdict, freeing the probe slot if p holds it.
func (b *Breaker) cancel(p Permit) {
	if !p.probe && mode(b.word.Load()&modeMask) != mHalfProbe {
		return // nothing to release and no lease that may have lapsed
	}
	b.mu.Lock()
	b.expire(b.now())
	if p.probe && b.mode == mHalfProbe && p.gen == b.gen {
		b.probeStart = 0
		b.setMode(mHalfFree)
	}
	b.unlock()
}
