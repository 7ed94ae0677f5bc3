package fallback

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// stamped is t as caused by an operator's act.
func stamped(t Transition, act, why string, until time.Time) Transition {
	t.Manual, t.Reason, t.Until = act, why, until
	return t
}

// TestManualCauses: a transition an operator caused names the act, its
// reason and its end; one caused by turns or time names none, whoever's
// call delivered it (GATEWAY §9.2: a log gives the true cause).
func TestManualCauses(t *testing.T) {
	tests := []struct {
		name string
		run  func(h *harness)
		want []Transition
	}{
		{"a trip by failures", func(h *harness) { h.fail(1, Transient, "a") },
			[]Transition{tr(Primary, Fallback, "a", "b", t0)}},
		{"a hold", func(h *harness) { h.m.Hold(at(time.Hour), "INC-42 (by alice)") },
			[]Transition{stamped(tr(Primary, Fallback, "a", "b", t0), "hold", "INC-42 (by alice)", at(time.Hour))}},
		{"a disable", func(h *harness) { h.trip(); h.take(); _ = h.m.Disable("b", at(time.Minute), "INC-9") },
			[]Transition{stamped(tr(Fallback, Fallback, "b", "c", t0), "disable", "INC-9", at(time.Minute))}},
		{"an enable", func(h *harness) { h.trip(); _ = h.m.Disable("b", time.Time{}, "x"); h.take(); _ = h.m.Enable("b") },
			[]Transition{stamped(tr(Fallback, Fallback, "c", "b", t0), "enable", "", time.Time{})}},
		{"SetAvailable is automation's", func(h *harness) { h.trip(); h.take(); _ = h.m.SetAvailable("b", false) },
			[]Transition{tr(Fallback, Fallback, "b", "c", t0)}},
		{"a reset", func(h *harness) { h.trip(); h.take(); h.m.Reset() },
			[]Transition{stamped(tr(Fallback, Primary, "b", "a", t0), "reset", "", time.Time{})}},
		{"a hold's end", func(h *harness) {
			h.m.Hold(at(time.Minute), "INC-1")
			h.take()
			h.clk.Advance(time.Minute)
			h.begin("a", true)
		}, []Transition{stamped(tr(Fallback, Recovering, "b", "a", at(time.Minute)), "hold_end", "INC-1", at(time.Minute))}},
		{"a disable's end seen by a hold", func(h *harness) {
			h.trip()
			_ = h.m.Disable("b", at(time.Second), "INC-2")
			h.take()
			h.clk.Advance(time.Second)
			h.m.Hold(at(time.Hour), "INC-3")
		}, []Transition{stamped(tr(Fallback, Fallback, "c", "b", at(time.Second)), "disable_end", "INC-2", at(time.Second))}},
		{"a probe's lease ending under a hold", func(h *harness) {
			h.fail(1, Transient, "a")
			h.clk.Advance(time.Minute)
			h.begin("a", true) // never settled
			h.take()
			h.clk.Advance(5 * time.Minute)
			h.m.Hold(at(time.Hour), "INC-4") // the lease re-trips first: the hold changes no route
		}, []Transition{tr(Recovering, Fallback, "a", "b", at(6*time.Minute))}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := abc()
			s.TripThreshold = 1
			h := newHarness(t, s)
			tc.run(h)
			h.expectEvents(tc.want...)
		})
	}
}

// TestManualTransitionJSON: the operator's act survives the wire form, and
// a transition without one writes none of its keys.
func TestManualTransitionJSON(t *testing.T) {
	for _, in := range []Transition{
		tr(Primary, Fallback, "a", "b", t0),
		stamped(tr(Primary, Fallback, "a", "b", t0), "hold", "INC-42", at(time.Hour)),
	} {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var out Transition
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out.String(), in.String()) || out.Manual != in.Manual || out.Reason != in.Reason || !out.Until.Equal(in.Until) {
			t.Fatalf("%s: round trip %v, want %v", b, out, in)
		}
		if in.Manual == "" && string(b) != `{"from":"primary","to":"fallback","from_model":"a","to_model":"b","at":"2026-01-01T00:00:00Z"}` {
			t.Fatalf("no act: %s", b)
		}
	}
}
