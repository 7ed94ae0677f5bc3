package fleet

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// twoWindowProcesses returns one shared model breaker as two processes
// see it, each with its own store: a failure-rate window of 10 calls at 0.3
// and a consecutive threshold that never trips.
func twoWindowProcesses(t *testing.T, srv *redistest.Server) []*fallback.Manager {
	t.Helper()
	var ms []*fallback.Manager
	for range 2 {
		s := startStore(t, srv, Options{})
		m, err := fallback.New(fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"}, TripThreshold: 100,
			FailureRate: 0.3, RateMinCalls: 10, RecoveryTimeout: time.Minute, Backend: s.ModelBackend("chat")})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// primaryTurn begins a turn, which must go to the primary, and settles it
// as a failure or a success.
func primaryTurn(t *testing.T, m *fallback.Manager, fail bool) {
	t.Helper()
	tk, err := m.Begin()
	if err != nil || tk.Model() != "gpt-a" {
		t.Fatalf("Begin = %q, %v", tk.Model(), err)
	}
	if fail {
		tk.Failure(fallback.Transient)
	} else {
		tk.SuccessAfter(time.Millisecond)
	}
}

// TestWindowTripGoesThroughTheStore (SEMANTICS §8.1, FLEET rev 3): the
// failure-rate window is kept per process, and a trip it causes is written
// through the store like any trip, so the fleet opens as one. A process whose
// own window holds too few calls does not trip; the other's trip opens it.
func TestWindowTripGoesThroughTheStore(t *testing.T) {
	ms := twoWindowProcesses(t, redistest.Start(t))
	modelWindowPair(t, ms).tripThroughTheStore(t)
	for i, m := range ms {
		if tk, _ := m.Begin(); tk.Model() != "gpt-b" {
			t.Fatalf("p%d routes to %q", i, tk.Model())
		}
	}
	if s := ms[1].Snapshot(); s.CooldownCause != fallback.CauseRecoveryTimeout || !s.FallbackActivated {
		t.Fatalf("snapshot %+v", s)
	}
}

// TestRetryBudgetPerProcess (SEMANTICS §8.3): with a fleet store each
// process's Manager keeps its own retry budget.
func TestRetryBudgetPerProcess(t *testing.T) {
	srv := redistest.Start(t)
	var ms []*fallback.Manager
	for range 2 {
		s := startStore(t, srv, Options{})
		m, err := fallback.New(fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"}, RetryBudgetBurst: 2,
			Backend: s.ModelBackend("budget")})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	tk, err := ms[0].Begin()
	if err != nil {
		t.Fatal(err)
	}
	if !tk.Retry() || !tk.Retry() || tk.Retry() {
		t.Fatal("process 0's budget of 2 allowed other than 2 retries")
	}
	tk.Success()
	if !ms[1].Retry("gpt-a") {
		t.Fatal("process 0's retries spent process 1's budget")
	}
}

// TestWindowClearedByFleetTransitions (SEMANTICS §8.1): every transition
// out of Primary clears a process's window, also when the store made it
// (this process's window trip, or another process's): after the trip and a
// Reset back to Primary, one failure finds an empty window and trips
// nothing, where the counts from before the trip would trip it again.
func TestWindowClearedByFleetTransitions(t *testing.T) {
	clearedByFleetTransitions(t, func(t *testing.T) windowPair {
		return modelWindowPair(t, twoWindowProcesses(t, redistest.Start(t)))
	})
}
