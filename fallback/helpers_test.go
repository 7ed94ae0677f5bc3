package fallback

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fakeClock is a manual clock, safe for concurrent use.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: t0} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// harness is a Manager on a fake clock that records its transitions.
type harness struct {
	t      *testing.T
	clk    *fakeClock
	m      *Manager
	mu     sync.Mutex
	events []Transition
}

func newHarness(t *testing.T, s Settings) *harness {
	t.Helper()
	h := &harness{t: t, clk: newClock()}
	s.Now = h.clk.Now
	s.OnTransition = func(tr Transition) {
		h.mu.Lock()
		h.events = append(h.events, tr)
		h.mu.Unlock()
	}
	m, err := New(s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	h.m = m
	return h
}

// abc is the usual settings: primary "a", chain "b", "c", defaults otherwise.
func abc() Settings { return Settings{Primary: "a", Chain: []string{"b", "c"}} }

func (h *harness) begin(wantModel string, wantProbe bool) Ticket {
	h.t.Helper()
	tk, err := h.m.Begin()
	if err != nil {
		h.t.Fatalf("Begin: %v, want model %q", err, wantModel)
	}
	if tk.Model() != wantModel || tk.IsProbe() != wantProbe {
		h.t.Fatalf("Begin = %q (probe %v), want %q (probe %v)", tk.Model(), tk.IsProbe(), wantModel, wantProbe)
	}
	return tk
}

func (h *harness) exhausted() *ExhaustedError {
	h.t.Helper()
	tk, err := h.m.Begin()
	if !errors.Is(err, ErrExhausted) {
		h.t.Fatalf("Begin = %q, %v; want ErrExhausted", tk.Model(), err)
	}
	if tk != (Ticket{}) {
		h.t.Fatalf("exhausted Begin returned a non-zero Turn")
	}
	var e *ExhaustedError
	if !errors.As(err, &e) {
		h.t.Fatalf("error %T is not *ExhaustedError", err)
	}
	return e
}

// fail runs n turns that fail with kind k on the model expected.
func (h *harness) fail(n int, k Kind, model string) {
	h.t.Helper()
	for range n {
		h.begin(model, false).Failure(k)
	}
}

// trip trips a default abc harness: three failed turns on "a".
func (h *harness) trip() {
	h.t.Helper()
	h.fail(h.m.cfg.tripThreshold, Transient, "a")
	if s := h.m.State(); s != Fallback {
		h.t.Fatalf("after %d failures state = %v, want fallback", h.m.cfg.tripThreshold, s)
	}
}

func (h *harness) take() []Transition {
	h.mu.Lock()
	defer h.mu.Unlock()
	ev := h.events
	h.events = nil
	return ev
}

func (h *harness) expectEvents(want ...Transition) {
	h.t.Helper()
	got := h.take()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		h.t.Fatalf("transitions:\n got %v\nwant %v", got, want)
	}
}

func (h *harness) expectState(s State) {
	h.t.Helper()
	if got := h.m.State(); got != s {
		h.t.Fatalf("State() = %v, want %v", got, s)
	}
}

func (h *harness) snap() Snapshot { return h.m.Snapshot() }

func tr(from, to State, fromModel, toModel string, at time.Time) Transition {
	return Transition{From: from, To: to, FromModel: fromModel, ToModel: toModel, At: at}
}

func at(d time.Duration) time.Time { return t0.Add(d) }

// equalSnap compares snapshots field by field (times with Equal; a nil and an
// empty Chain are equal).
func equalSnap(a, b Snapshot) bool {
	if a.State != b.State || a.ConsecutiveFailures != b.ConsecutiveFailures ||
		a.ProbeSuccesses != b.ProbeSuccesses || !a.TrippedAt.Equal(b.TrippedAt) ||
		a.FallbackActivated != b.FallbackActivated || !a.ProbeStartedAt.Equal(b.ProbeStartedAt) ||
		!a.CooldownEnds.Equal(b.CooldownEnds) || a.CooldownCause != b.CooldownCause ||
		!a.HoldUntil.Equal(b.HoldUntil) || a.HoldReason != b.HoldReason ||
		len(a.Chain) != len(b.Chain) {
		return false
	}
	for i := range a.Chain {
		if a.Chain[i] != b.Chain[i] {
			return false
		}
	}
	return true
}
