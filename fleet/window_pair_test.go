package fleet

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
)

// windowPair is one shared breaker, a tool's or a model's, as two processes
// see it, each on its own store: the failure-rate window's rules hold for
// both kinds alike (SEMANTICS §8.1), so one test body drives either.
type windowPair struct {
	calm, tripped string                 // the states' names: closed and open, or primary and fallback
	settle        func(p int, fail bool) // one call on process p, settled as a failure or a success
	state         func(p int) string     // process p's state
	reset         func(p int)            // an operator's Reset on process p
}

// modelWindowPair is the model breakers ms (twoWindowProcesses) as a windowPair.
func modelWindowPair(t *testing.T, ms []*fallback.Manager) windowPair {
	return windowPair{
		calm: fallback.Primary.String(), tripped: fallback.Fallback.String(),
		settle: func(p int, fail bool) { primaryTurn(t, ms[p], fail) },
		state:  func(p int) string { return ms[p].State().String() },
		reset:  func(p int) { ms[p].Reset() },
	}
}

// toolWindowPair is the tool breakers bs (twoToolProcesses) as a windowPair.
func toolWindowPair(t *testing.T, bs []*breaker.Breaker) windowPair {
	return windowPair{
		calm: breaker.Closed.String(), tripped: breaker.Open.String(),
		settle: func(p int, fail bool) { toolCall(t, bs[p], fail) },
		state:  func(p int) string { return bs[p].State().String() },
		reset:  func(p int) { bs[p].Reset() },
	}
}

// nineEach settles nine calls on each process, every third a failure: a
// rate of 1/3, over the tests' FailureRate 0.3, in windows under their
// RateMinCalls 10.
func (w windowPair) nineEach() {
	for i := range 9 {
		w.settle(0, i%3 == 2)
		w.settle(1, i%3 == 2)
	}
}

// trip fails process p's tenth call (4 failures in 10, over 0.3) and waits
// until both processes see the trip.
func (w windowPair) trip(t *testing.T, p int) {
	t.Helper()
	w.settle(p, true)
	for q := range 2 {
		eventually(t, time.Second, w.tripped+" everywhere", func() bool { return w.state(q) == w.tripped })
	}
}

// tripThroughTheStore: a process whose own window holds too few calls does
// not trip; process 0's tenth call trips its window, and the trip, written
// through the store, reaches process 1.
func (w windowPair) tripThroughTheStore(t *testing.T) {
	t.Helper()
	w.nineEach()
	if w.state(0) != w.calm || w.state(1) != w.calm {
		t.Fatal("tripped under RateMinCalls")
	}
	w.trip(t, 0)
}

// clearedByFleetTransitions: every transition out of the calm state clears
// a process's window, also when the store made it (this process's window
// trip, or another process's): after the trip and a Reset back, one failure
// finds an empty window and trips nothing, where the counts from before the
// trip would trip it again. pair makes a fresh pair for each case.
func clearedByFleetTransitions(t *testing.T, pair func(t *testing.T) windowPair) {
	for _, c := range []struct {
		name    string
		tripper int // the process whose tenth verdict trips the fleet
	}{
		{"this process's window trip", 0},
		{"another process's trip", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := pair(t)
			w.nineEach()
			w.trip(t, c.tripper)
			w.reset(1)
			eventually(t, time.Second, w.calm+" again", func() bool { return w.state(0) == w.calm })
			w.settle(0, true) // 1 of 1: under RateMinCalls unless the old counts stayed
			if got := w.state(0); got != w.calm {
				t.Fatalf("one failure after the trip: %s; the window kept its counts from before the trip", got)
			}
		})
	}
}
