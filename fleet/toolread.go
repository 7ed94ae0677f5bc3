package fleet

import (
	"math"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// WouldAllow reports whether [ToolBreaker.Allow] would grant a call at this
// instant, from the mirror only (no round trip), on the estimated store clock.
func (b *ToolBreaker) WouldAllow() bool {
	mr := b.mirror.Load()
	if mr.quiet {
		return true
	}
	switch mr.mode {
	case LocalMode:
		return mr.local.wouldAllow(time.Now().UnixNano())
	case FailOpenMode:
		return true
	case FailClosedMode:
		return false
	}
	now := b.s.clock.storeNow()
	switch mr.m {
	case 1:
		return now >= mr.openUntil()*1000
	case 2: // an expired lease re-opens at its end, then the cooldown c(n + 1) runs
		v := b.mirrorView(mr, now/1000)
		return v.m == 1 && now >= v.ou*1000
	}
	return true
}

// mirrorView is the mirror's state at now (store µs) with a lapsed lease
// applied (a re-trip: n + 1, the cooldown c(n) from the lease's end) and n
// reported as 0 once the breaker has been closed for MaxRecoveryTimeout.
type mirrorView struct {
	m          int
	lf, ps, ou int64 // ou: an open breaker's end
	n          int64
	cause      breaker.Cause
}

// mirrorView returns the view of mr at now (store µs).
func (b *ToolBreaker) mirrorView(mr *toolMirror, now int64) mirrorView {
	k := b.nums.Load()
	v := mirrorView{m: mr.m, lf: mr.lf, ps: mr.ps, ou: mr.openUntil(), n: mr.n}
	switch {
	case v.m == 2 && now >= mr.leaseEnd():
		v.m, v.lf = 1, mr.leaseEnd()
		v.n = min(v.n+1, math.MaxInt32)
		v.ou = v.lf + k.cooldown(v.n)
	case v.m == 0 && now-mr.ca >= k.maxRec:
		v.n = 0
	}
	v.cause = causeOf(v.m == 1 && mr.hu > mr.bu && v.ou == mr.hu, mr.hc, v.n, k.factor)
	return v
}

// causeOf is breaker.Snapshot's Cause of an open breaker: the hint or the
// quota when it decides (hint true; hc 1 a hint, 2 a quota), backoff when
// n > 1 with the factor on, else the recovery timeout.
func causeOf(hint bool, hc, n int64, factor float64) breaker.Cause {
	switch {
	case hint && hc == 2:
		return breaker.CauseQuota
	case hint:
		return breaker.CauseHint
	case n > 1 && factor > 1:
		return breaker.CauseBackoff
	}
	return breaker.CauseRecoveryTimeout
}

// RetryIn returns how long until the gate may grant a call (0 when
// WouldAllow is true), rounded up to a whole millisecond, from the mirror.
func (b *ToolBreaker) RetryIn() time.Duration {
	if b.WouldAllow() {
		return 0
	}
	mr := b.mirror.Load()
	var d int64
	switch mr.mode {
	case LocalMode:
		v := mr.local.view(time.Now().UnixNano())
		now := time.Now().UnixNano()
		switch v.m {
		case 1:
			d = v.ou - now
		case 2:
			d = v.ps + v.pl - now
		}
	case FailClosedMode:
		d = int64(b.s.retry)
	default:
		now := b.s.clock.storeNow()
		switch v := b.mirrorView(mr, now/1000); v.m {
		case 1:
			d = v.ou*1000 - now
		case 2:
			d = mr.leaseEnd()*1000 - now
		}
	}
	ms := int64(time.Millisecond)
	return time.Duration((max(d, 1) + ms - 1) / ms * ms)
}

// State returns the state from the mirror, with no round trip. A half-open
// breaker whose probe lease has expired reads as Open. While the store is
// down it is the local breaker's state (Local), Closed (FailOpen) or Open
// (FailClosed).
func (b *ToolBreaker) State() breaker.State {
	mr := b.mirror.Load()
	switch mr.mode {
	case LocalMode:
		return mr.local.state(time.Now().UnixNano(), true)
	case FailOpenMode:
		return breaker.Closed
	case FailClosedMode:
		return breaker.Open
	}
	if mr.m == 2 && b.s.clock.storeNow() >= mr.leaseEnd()*1000 {
		return breaker.Open
	}
	return modeState(mr.m)
}

// Mode returns where the breaker's state lives now: Shared, or the store-down
// mode of the Store's Policy.
func (b *ToolBreaker) Mode() Mode { return b.mirror.Load().mode }

// ToolSnapshot is a consistent view of a [ToolBreaker]'s mirror. It is
// comparable with ==.
type ToolSnapshot struct {
	// Snapshot is the breaker's state as [breaker.Snapshot] reports it, with
	// times converted to the local clock. While the store is down under
	// FailOpen or FailClosed it is the last shared state seen.
	breaker.Snapshot
	// Mode is where the state lives: Shared, or the store-down mode.
	Mode Mode
	// Epoch identifies the store's incarnation of the state (a store
	// restarted empty starts a new one); Generation changes on every state
	// change. Both come from the last state seen from the store.
	Epoch, Generation uint64
}

// Snapshot returns the mirror's view, with no round trip.
func (b *ToolBreaker) Snapshot() ToolSnapshot {
	mr := b.mirror.Load()
	s := ToolSnapshot{Mode: mr.mode, Epoch: mr.ep, Generation: mr.g}
	if mr.mode == LocalMode {
		v := mr.local.view(time.Now().UnixNano())
		s.State, s.ConsecutiveFailures = modeState(v.m), int(v.f)
		if v.hasLF {
			s.LastFailure = time.Unix(0, v.lf)
		}
		if v.m == 2 {
			s.ProbeStartedAt = time.Unix(0, v.ps)
		}
		s.Trips = int(v.n)
		if v.m == 1 {
			s.OpenUntil, s.Cause = time.Unix(0, v.ou), causeOf(v.byHint, v.hc, v.n, v.backoff)
		}
		return s
	}
	v := b.mirrorView(mr, b.s.clock.storeNow()/1000)
	s.State, s.ConsecutiveFailures, s.Trips = modeState(v.m), int(mr.f), int(v.n)
	if v.lf >= 0 {
		s.LastFailure = b.s.clock.toLocal(v.lf)
	}
	switch v.m {
	case 1:
		s.OpenUntil, s.Cause = b.s.clock.toLocal(v.ou), v.cause
	case 2:
		s.ProbeStartedAt = b.s.clock.toLocal(v.ps)
	}
	return s
}

// Reset returns the shared breaker to Closed with no failures, for the whole
// fleet (one round trip). While the store is down it resets the local breaker.
func (b *ToolBreaker) Reset() {
	mr := b.mirror.Load()
	if mr.mode == Shared {
		if _, err := b.script("reset", false, 0, 0); err == nil {
			return
		}
		mr = b.mirror.Load()
	}
	if mr.mode == LocalMode {
		l := mr.local
		l.mu.Lock()
		l.f, l.hasLF, l.ps, l.sg = 0, false, 0, l.g+1
		l.n, l.ca, l.bu, l.hu, l.hc = 0, time.Now().UnixNano(), noUntil, noUntil, 0
		l.setMode(0)
		l.mu.Unlock()
		b.touched()
	}
}
