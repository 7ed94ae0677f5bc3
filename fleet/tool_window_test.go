package fleet

import (
	"errors"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// toolCall makes one call through b's gate and settles it as a failure or
// a success.
func toolCall(t *testing.T, b *breaker.Breaker, fail bool) {
	t.Helper()
	p, err := b.Allow()
	if err != nil {
		t.Fatalf("Allow: %v", err)
	}
	if fail {
		p.Failure()
	} else {
		p.SuccessAfter(time.Millisecond)
	}
}

// twoToolProcesses returns two breakers named name with settings s, each on
// its own Store (one simulated process each) of srv, through ToolBackend.
func twoToolProcesses(t *testing.T, srv *redistest.Server, s breaker.Settings) []*breaker.Breaker {
	t.Helper()
	var bs []*breaker.Breaker
	for range 2 {
		st := startStore(t, srv, Options{})
		s.Backend = st.ToolBackend()
		b, err := breaker.New(s)
		if err != nil {
			t.Fatal(err)
		}
		bs = append(bs, b)
	}
	return bs
}

// searchWindow is a tool breaker's settings with a failure-rate window of
// 10 calls at 0.3 and a consecutive threshold that never trips.
var searchWindow = breaker.Settings{Name: "search", FailureThreshold: 100,
	FailureRate: 0.3, RateMinCalls: 10, RecoveryDuration: time.Minute}

// TestToolWindowTripGoesThroughTheStore (SEMANTICS §8.1, FLEET rev 3): a tool
// breaker's failure-rate window is kept per process, and a trip it causes is
// written through the store like any trip, so the fleet opens as one. A
// process whose own window holds too few calls does not trip; the other's
// trip opens it within 1 s.
func TestToolWindowTripGoesThroughTheStore(t *testing.T) {
	srv := redistest.Start(t)
	bs := twoToolProcesses(t, srv, searchWindow)
	toolWindowPair(t, bs).tripThroughTheStore(t)
	for i, b := range bs {
		if _, err := b.Allow(); !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("p%d: Allow = %v, want a refusal", i, err)
		}
	}
}

// TestToolSlowTripGoesThroughTheStore (SEMANTICS §8.2): slow successes trip
// one process's window; the success is counted, then the fleet's breaker
// trips, dated now, and the other process refuses within 1 s.
func TestToolSlowTripGoesThroughTheStore(t *testing.T) {
	srv := redistest.Start(t)
	bs := twoToolProcesses(t, srv, breaker.Settings{Name: "slow", SlowCallAfter: 100 * time.Millisecond,
		SlowCallRate: 0.5, RateMinCalls: 4, RecoveryDuration: time.Minute})
	for i := range 4 {
		p, err := bs[0].Allow()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		p.SuccessAfter(time.Duration(i) * 100 * time.Millisecond) // 0, 100ms, 200ms, 300ms: 2 slow in 4
	}
	eventually(t, time.Second, "process 1 sees Open", func() bool { return bs[1].State() == breaker.Open })
	_, err := bs[1].Allow()
	var oe *breaker.OpenError
	if !errors.As(err, &oe) || oe.RetryIn < 58*time.Second {
		t.Fatalf("process 1: Allow = %v, want a refusal for about a minute", err)
	}
}

// TestToolWindowTripWhileStoreDown: while the store is down (Policy Local)
// the process's window trips its local breaker (the trip flag reaches the
// local breaker as it would reach the store).
func TestToolWindowTripWhileStoreDown(t *testing.T) {
	srv := redistest.Start(t)
	st := startStore(t, srv, Options{Policy: Local, StoreTimeout: faultTimeout, RetryInterval: 20 * time.Millisecond})
	bs := breaker.Settings{Name: "local", FailureThreshold: 100, FailureRate: 0.5,
		RateMinCalls: 4, RecoveryDuration: time.Minute}
	tb, err := st.Tool(bs)
	if err != nil {
		t.Fatal(err)
	}
	bs.Backend = st.ToolBackend() // attaches to tb
	b, err := breaker.New(bs)
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	eventually(t, time.Second, "local mode", func() bool { return tb.Mode() == LocalMode })
	for i, fail := range []bool{false, true, false, true} {
		p, err := b.Allow()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if fail {
			p.Failure()
		} else {
			p.Success()
		}
	}
	if st := b.State(); st != breaker.Open {
		t.Fatalf("state %v after 2 failures in 4 in Local mode, want Open", st)
	}
}

// TestToolWindowClearedByFleetTransitions (SEMANTICS §8.1): every
// transition out of Closed clears a process's window, also when the store
// made it (this process's trip, or another's): after the trip and a Reset,
// one failure finds an empty window and trips nothing.
func TestToolWindowClearedByFleetTransitions(t *testing.T) {
	clearedByFleetTransitions(t, func(t *testing.T) windowPair {
		return toolWindowPair(t, twoToolProcesses(t, redistest.Start(t), searchWindow))
	})
}
