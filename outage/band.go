package outage

import (
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// sampleState extends the state band with the breaker's state now. A lease that
// expired since the last event is placed at its end, where the breaker's semantics
// put it (State reads an expired lease as Open).
func (sm *sim) sampleState() {
	st := sm.b.State()
	var probeStart time.Duration
	if st == breaker.HalfOpen {
		probeStart = sm.b.Snapshot().ProbeStartedAt.Sub(epoch)
	}
	prev := sm.bandState
	switch {
	case st == prev && st != breaker.HalfOpen:
		return
	case st == breaker.HalfOpen && prev == breaker.HalfOpen:
		if probeStart+sm.s.ProbeTimeout == sm.leaseEnd {
			return
		}
		// The lease expired and a fresh probe was granted by the same gate call.
		sm.addSegment(sm.leaseEnd, breaker.Open)
		sm.addSegment(probeStart, breaker.HalfOpen)
	case st == breaker.HalfOpen:
		sm.addSegment(probeStart, st)
	case prev == breaker.HalfOpen && st == breaker.Open && sm.leaseEnd <= sm.now:
		sm.addSegment(sm.leaseEnd, st)
	default:
		sm.addSegment(sm.now, st)
	}
	if st == breaker.HalfOpen {
		sm.leaseEnd = probeStart + sm.s.ProbeTimeout
	}
	if st == breaker.Closed {
		sm.lastClose = sm.now
	}
	sm.bandState = st
}

// addSegment starts a band segment in state st at t, closing the previous one. A
// segment may last no time (two transitions at one instant); it is kept so that the
// band shows every transition.
func (sm *sim) addSegment(t time.Duration, st breaker.State) {
	sm.band[len(sm.band)-1].To = t
	sm.band = append(sm.band, Segment{From: t, State: st})
}
