package fallback

import (
	"errors"
	"testing"
)

// TestRoutePast: a model routed past for a turn is passed by Next, Usable
// and Hedge as a model that failed the turn slowly is, and the breaker sees
// nothing of it: no ticket, no probe slot, no verdict, no transition
// (SEMANTICS §9.3 rule 6).
func TestRoutePast(t *testing.T) {
	tests := []struct {
		name      string
		state     State    // where the breaker is when the turn begins (Recovering: the probe is due)
		past      []string // the models routed past, in order
		wantModel string   // where Next sends the turn
		wantProbe bool
		usable    bool // Usable after the routes past
	}{
		{"primary in Primary", Primary, []string{"a"}, "b", false, true},
		{"primary in Recovering: no probe", Recovering, []string{"a"}, "b", false, true},
		{"active entry in Fallback", Fallback, []string{"b"}, "c", false, true},
		{"primary and first entry in Recovering", Recovering, []string{"a", "b"}, "c", false, true},
		{"nothing past them: where Begin sends it", Recovering, []string{"a", "b", "c"}, "a", true, false},
		{"every entry in Fallback", Fallback, []string{"b", "c"}, "b", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, abc())
			if tc.state != Primary {
				h.trip()
			}
			if tc.state == Recovering {
				h.clk.Advance(DefaultRecoveryTimeout) // the cooldown is over: the probe is due
			}
			h.take()
			before := h.snap()
			var a Attempts
			for _, m := range tc.past {
				if err := a.RoutePast(h.m, m); err != nil {
					t.Fatalf("RoutePast(%q): %v", m, err)
				}
			}
			if s := h.snap(); !equalSnap(s, before) {
				t.Fatalf("RoutePast changed the breaker:\n got %+v\nwant %+v", s, before)
			}
			h.expectEvents()
			if got := a.Usable(h.m); got != tc.usable {
				t.Fatalf("Usable = %v, want %v", got, tc.usable)
			}
			wantNext := ""
			if tc.usable {
				wantNext = tc.wantModel
			}
			shared := sharedTwin(t, h.m)
			for _, m := range []*Manager{h.m, shared} {
				if got, ok := a.NextModel(m); got != wantNext || ok != tc.usable {
					t.Fatalf("NextModel (shared %v) = %q, %v; want %q, %v", m == shared, got, ok, wantNext, tc.usable)
				}
			}
			tk, err := h.m.Next(&a)
			if err != nil || tk.Model() != tc.wantModel || tk.IsProbe() != tc.wantProbe {
				t.Fatalf("Next = %q (probe %v), %v; want %q (probe %v)", tk.Model(), tk.IsProbe(), err, tc.wantModel, tc.wantProbe)
			}
			local, lok := a.NextModel(h.m)
			if got, ok := a.NextModel(shared); got != local || ok != lok {
				t.Fatalf("after Next: NextModel through a Backend = %q, %v; locally %q, %v", got, ok, local, lok)
			}
			if tc.state == Recovering && !tc.wantProbe {
				// The probe slot is still free: another turn takes it.
				h.begin("a", true).Cancel()
			}
			tk.Cancel()
		})
	}
}

// TestRoutePastInPrimaryCountsNothing: the chain entry serving a turn whose
// primary was routed past in Primary counts nothing for the entry, as after
// a slow failure (§3, §7).
func TestRoutePastInPrimaryCountsNothing(t *testing.T) {
	h := newHarness(t, abc())
	for range 5 {
		var a Attempts
		if err := a.RoutePast(h.m, "a"); err != nil {
			t.Fatal(err)
		}
		tk, _ := h.m.Next(&a)
		if tk.Model() != "b" {
			t.Fatalf("Next = %q, want b", tk.Model())
		}
		tk.Failure(Transient)
	}
	if s := h.snap(); s.State != Primary || s.Chain[0].Attempts != 0 || s.ConsecutiveFailures != 0 {
		t.Fatalf("after five failures of b past a: %+v", s)
	}
}

// TestRoutePastHedge: a hedge never goes to a model routed past.
func TestRoutePastHedge(t *testing.T) {
	s := abc()
	s.HedgeAfter = 1
	h := newHarness(t, s)
	var a Attempts
	run, _ := h.m.Next(&a)
	if err := a.RoutePast(h.m, "b"); err != nil {
		t.Fatal(err)
	}
	hd, ok := h.m.Hedge(&a, run)
	if !ok || hd.Model() != "c" {
		t.Fatalf("Hedge = %q, %v; want c", hd.Model(), ok)
	}
	hd.Cancel()
	run.Cancel()
}

// TestRoutePastErrors: a model of neither the primary nor the chain is
// ErrNotInChain; a nil *Attempts ignores the call.
func TestRoutePastErrors(t *testing.T) {
	h := newHarness(t, abc())
	var a Attempts
	if err := a.RoutePast(h.m, "z"); !errors.Is(err, ErrNotInChain) {
		t.Fatalf("RoutePast(z) = %v, want ErrNotInChain", err)
	}
	if !a.clean() {
		t.Fatal("a refused RoutePast changed the turn")
	}
	if err := (*Attempts)(nil).RoutePast(h.m, "a"); err != nil {
		t.Fatalf("nil turn: %v", err)
	}
	if err := (*Attempts)(nil).RoutePast(h.m, "z"); !errors.Is(err, ErrNotInChain) {
		t.Fatalf("nil turn, RoutePast(z) = %v, want ErrNotInChain", err)
	}
}

// usableShared is a test double of a Shared whose Usable is a local
// Manager's (it implements only the methods these tests reach).
type usableShared struct {
	Shared
	m *Manager
}

func (s usableShared) Usable(probed bool, slow func(int) bool) bool {
	var a Attempts
	a.probed.Store(probed)
	n := len(s.m.cfg.models) + 1
	for i := range n {
		if slow(i) {
			a.markSlow(i, n)
		}
	}
	return a.Usable(s.m)
}

// sharedTwin returns a Manager with m's settings whose shared state is m
// (through Usable only).
func sharedTwin(t fataler, m *Manager) *Manager {
	t.Helper()
	tw, err := New(Settings{Primary: m.cfg.primary, Chain: m.cfg.models, Backend: sharedBackend{usableShared{m: m}}})
	if err != nil {
		t.Fatal(err)
	}
	return tw
}

// BenchmarkNextModel measures the pure read the gateway asks before each
// attempt of a route with a pool (a tripped manager, the primary routed
// past).
func BenchmarkNextModel(b *testing.B) {
	m := benchManager(b, true)
	var a Attempts
	if err := a.RoutePast(m, "a"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if got, ok := a.NextModel(m); !ok || got != "b" {
			b.Fatalf("NextModel = %q, %v", got, ok)
		}
	}
}
