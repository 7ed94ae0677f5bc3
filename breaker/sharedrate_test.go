package breaker

import (
	"testing"
	"time"
)

// recShared is a Shared that records the outcomes it is given, in a state
// the test sets, and keeps the Settings it was attached with.
type recShared struct {
	nopShared
	state State
	got   []Outcome
	s     Settings
}

func (r *recShared) Settle(_ SharedPermit, o Outcome) { r.got = append(r.got, o) }
func (r *recShared) State() State                     { return r.state }

type recBackend struct{ r *recShared }

func (b recBackend) Attach(s Settings) (Shared, error) { b.r.s = s; return b.r, nil }

// TestSharedRateWindow (SEMANTICS §8.1, §8.2, FLEET rev 3): with a Backend the
// window is kept by the Breaker, per process; the verdict after which it trips
// reaches the Backend with OutcomeTrip, so that the shared breaker trips as on
// the threshold. A state other than Closed, and a transition the backend
// reports, clear the window; a probe's verdict is never counted.
func TestSharedRateWindow(t *testing.T) {
	type step struct {
		state State
		probe bool
		do    func(Permit)
		want  Outcome
	}
	fail := func(p Permit) { p.Failure() }
	ok := func(p Permit) { p.Success() }
	slow := func(p Permit) { p.SuccessAfter(2 * time.Second) }
	tmo := func(p Permit) { p.TimeoutAfter(time.Second) }
	const S, F, T, X = OutcomeSuccess, OutcomeFailure, OutcomeTimeout, OutcomeTrip
	tests := []struct {
		name  string
		s     Settings
		steps []step
	}{
		{"a failure that reaches the rate trips", Settings{FailureRate: 0.5, RateMinCalls: 4},
			[]step{{Closed, false, ok, S}, {Closed, false, fail, F}, {Closed, false, ok, S}, {Closed, false, fail, F | X}}},
		{"a timeout that reaches the rate trips", Settings{FailureRate: 0.5, RateMinCalls: 2},
			[]step{{Closed, false, ok, S}, {Closed, false, tmo, T | X}}},
		{"a slow success that reaches the slow rate trips", Settings{SlowCallAfter: time.Second, SlowCallRate: 0.5, RateMinCalls: 2},
			[]step{{Closed, false, ok, S}, {Closed, false, slow, S | X}}},
		{"under RateMinCalls: no trip", Settings{FailureRate: 0.5, RateMinCalls: 3},
			[]step{{Closed, false, fail, F}, {Closed, false, fail, F}}},
		{"Open clears the window", Settings{FailureRate: 0.5, RateMinCalls: 2},
			[]step{{Closed, false, fail, F}, {Open, false, fail, F}, {Closed, false, fail, F}, {Closed, false, fail, F | X}}},
		{"a probe's verdict counts nothing", Settings{FailureRate: 0.5, RateMinCalls: 2},
			[]step{{Closed, false, fail, F}, {Closed, true, fail, F}, {Closed, false, ok, S}, {Closed, false, fail, F | X}}},
		{"no window: no flag", Settings{FailureThreshold: 1},
			[]step{{Closed, false, fail, F}, {Closed, false, fail, F}}},
	}
	for _, tt := range tests {
		r := &recShared{}
		tt.s.Backend = recBackend{r}
		b, err := New(tt.s)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for i, st := range tt.steps {
			r.state, r.got = st.state, nil
			st.do(Permit{b: b, gen: 1, probe: st.probe})
			if len(r.got) != 1 || r.got[0] != st.want {
				t.Fatalf("%s: step %d: Settle got %v, want [%d]", tt.name, i, r.got, st.want)
			}
		}
	}
}

// TestSharedRateWindowClearedByTransitions: a transition out of Closed that
// the Backend reports (through the OnStateChange it was attached with)
// clears the process's window before the caller's callback runs.
func TestSharedRateWindowClearedByTransitions(t *testing.T) {
	r := &recShared{state: Closed}
	var calls int
	b, err := New(Settings{FailureRate: 0.5, RateMinCalls: 2, Backend: recBackend{r},
		OnStateChange: func(string, State, State) { calls++ }})
	if err != nil {
		t.Fatal(err)
	}
	Permit{b: b, gen: 1}.Failure()
	r.s.OnStateChange("", Closed, Open) // another process tripped it
	r.s.OnStateChange("", HalfOpen, Closed)
	r.got = nil
	Permit{b: b, gen: 1}.Failure()
	if calls != 2 || len(r.got) != 1 || r.got[0] != OutcomeFailure {
		t.Fatalf("callbacks %d, Settle got %v: want 2 and [failure] (the window was cleared)", calls, r.got)
	}
}
