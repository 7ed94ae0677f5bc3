package fleet

import (
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
		return now >= (mr.lf+b.rec)*1000
	case 2: // an expired lease re-opens at its end, then the cooldown runs
		return now >= (mr.ps+b.lease+b.rec)*1000
	}
	return true
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
			d = v.lf + v.rec - now
		case 2:
			d = v.ps + mr.local.lease - now
		}
	case FailClosedMode:
		d = int64(b.s.retry)
	default:
		now := b.s.clock.storeNow()
		switch mr.m {
		case 1:
			d = (mr.lf+b.rec)*1000 - now
		case 2:
			d = (mr.ps+b.lease)*1000 - now
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
	if mr.m == 2 && b.s.clock.storeNow() >= (mr.ps+b.lease)*1000 {
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
		return s
	}
	m, lf, ps := mr.m, mr.lf, mr.ps
	if m == 2 && b.s.clock.storeNow() >= (ps+b.lease)*1000 {
		m, lf = 1, ps+b.lease
	}
	s.State, s.ConsecutiveFailures = modeState(m), int(mr.f)
	if lf >= 0 {
		s.LastFailure = b.s.clock.toLocal(lf)
	}
	if m == 2 {
		s.ProbeStartedAt = b.s.clock.toLocal(ps)
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
		l.setMode(0)
		l.mu.Unlock()
		b.touched()
	}
}
