package fallback

import (
	"testing"
	"time"
)

// TestReconfigureHedgeBudget: a new HedgeBudget keeps the hedge bucket's
// level (§7.4, GATEWAY §9.3) and feeds the next turns.
func TestReconfigureHedgeBudget(t *testing.T) {
	s := Settings{Primary: "a", Chain: []string{"b", "c"}, HedgeAfter: time.Second, HedgeBudget: 0.5}
	h := newHarness(t, s)
	var a Attempts
	run, _ := h.m.Next(&a)
	for range 10 { // the bucket starts full at 10
		if hd, ok := h.m.Hedge(&a, run); ok {
			hd.Cancel()
		}
	}
	s.HedgeBudget = 1
	if err := h.m.Reconfigure(s); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.m.Hedge(&a, run); ok {
		t.Fatal("Reconfigure refilled the hedge bucket")
	}
	var u Attempts
	tk, _ := h.m.Next(&u) // feeds the new HedgeBudget: 1
	tk.Cancel()
	hd, ok := h.m.Hedge(&a, run)
	if !ok {
		t.Fatal("a turn fed less than the new HedgeBudget")
	}
	hd.Cancel()
	if _, ok := h.m.Hedge(&a, run); ok {
		t.Fatal("a turn fed more than the new HedgeBudget")
	}
}

// refusingShared is a test double of a Shared that refuses every hedge (it
// implements only the methods these tests reach).
type refusingShared struct {
	Shared
	hedges int
}

func (s *refusingShared) Hedge(func(int) bool, int) (SharedTurn, bool) {
	s.hedges++
	return SharedTurn{}, false
}

func (s *refusingShared) Reconfigure(Settings) error { return nil }

type sharedBackend struct{ s Shared }

func (b sharedBackend) Attach(Settings) (Shared, error) { return b.s, nil }

// TestSharedHedgeBudget: with a Backend the Manager keeps the hedge budget:
// a hedge the shared breaker refuses gives its token back, and Reconfigure
// retunes the bucket's feed.
func TestSharedHedgeBudget(t *testing.T) {
	sh := &refusingShared{}
	s := Settings{Primary: "a", Chain: []string{"b"}, HedgeAfter: time.Second, HedgeBudget: 0.5, Backend: sharedBackend{sh}}
	m, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, ok := m.Hedge(nil, Ticket{}); ok {
			t.Fatal("a hedge the shared breaker refused")
		}
	}
	if sh.hedges != 20 || m.hedges.Tokens() != hedgeCap {
		t.Fatalf("%d hedges asked, bucket at %v: refused hedges were not given back", sh.hedges, m.hedges.Tokens())
	}
	s.HedgeBudget = 2
	if err := m.Reconfigure(s); err != nil {
		t.Fatal(err)
	}
	for m.hedges.Spend() {
	}
	m.hedges.Feed()
	if got := m.hedges.Tokens(); got != 2 {
		t.Fatalf("after Reconfigure a turn feeds %v, want the new HedgeBudget 2", got)
	}
}
