package fallback

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCallbacksRunOutsideTheLockInOrder(t *testing.T) {
	clk := newClock()
	var m *Manager
	var got []Transition
	var states []State
	s := abc()
	s.Now = clk.Now
	s.OnTransition = func(tr Transition) {
		// Calling back into the manager must not deadlock.
		states = append(states, m.State())
		_ = m.Snapshot()
		_ = m.ActiveModel()
		_ = m.FallbackActivated()
		got = append(got, tr)
		if tr.From == Primary && tr.To == Fallback {
			// A transition caused inside the callback is delivered after it returns.
			m.Reset()
			if len(got) != 1 {
				panic("re-entrant transition delivered inside the callback")
			}
		}
	}
	m, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		tk, err := m.Begin()
		if err != nil {
			t.Fatal(err)
		}
		tk.Failure(Transient)
	}
	// Both callbacks have returned before Failure returned.
	want := []Transition{
		tr(Primary, Fallback, "a", "b", t0),
		stamped(tr(Fallback, Primary, "b", "a", t0), "reset", "", time.Time{}),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("transitions:\n got %v\nwant %v", got, want)
	}
	// The first callback saw Fallback... then its own Reset; the second saw Primary.
	if !reflect.DeepEqual(states, []State{Fallback, Primary}) {
		t.Fatalf("states seen by callbacks: %v", states)
	}
}

func TestCallbackMayBeginAndSettle(t *testing.T) {
	clk := newClock()
	var m *Manager
	var inside []string
	s := abc()
	s.Now = clk.Now
	s.OnTransition = func(tr Transition) {
		if tr.To == Recovering {
			// The Begin that caused this has released the lock and holds the
			// probe: a turn started here is served by the chain.
			tk, err := m.Begin()
			if err != nil {
				panic(err)
			}
			inside = append(inside, tk.Model())
			tk.Failure(Transient)
		}
	}
	m, _ = New(s)
	for range 3 {
		tk, _ := m.Begin()
		tk.Failure(Transient)
	}
	clk.Advance(time.Minute)
	p, _ := m.Begin() // Fallback -> Recovering; the callback has run when Begin returns
	if !p.IsProbe() || len(inside) != 1 || inside[0] != "b" {
		t.Fatalf("probe %v, turns started in the callback %v", p.IsProbe(), inside)
	}
	if got := m.Snapshot().Chain[0].Attempts; got != 1 {
		t.Fatalf("the callback's failure was not applied: attempts %d", got)
	}
	p.Success()
}

func TestNoCallbackNoQueue(t *testing.T) {
	m, err := New(abc())
	if err != nil {
		t.Fatal(err)
	}
	if m.queue != nil {
		t.Fatal("a queue without OnTransition")
	}
	for range 3 {
		tk, _ := m.Begin()
		tk.Failure(Transient)
	}
	if m.State() != Fallback {
		t.Fatal("did not trip")
	}
}

// TestConcurrentTurns runs many goroutines against one manager (under -race)
// and checks that at most one probe is ever in flight and that every routed
// model is the primary or a chain entry.
func TestConcurrentTurns(t *testing.T) {
	clk := newClock()
	var transitions atomic.Int64
	s := Settings{
		Primary: "a", Chain: []string{"b", "c", "d"}, MaxFailCount: 50,
		RecoveryTimeout: time.Second, ProbeTimeout: time.Hour,
		Now: clk.Now, OnTransition: func(Transition) { transitions.Add(1) },
	}
	m, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	var live atomic.Int32 // probes granted and not yet settled
	var probes atomic.Int64
	// A Reset forgets a probe in flight, so a new one may be granted while
	// the old ticket is still held: probes are counted only while no Reset
	// can run (resets holds the write side).
	var resets sync.RWMutex
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := range 2000 {
				resets.RLock()
				tk, err := m.Begin()
				if err != nil {
					resets.RUnlock()
					if !errors.Is(err, ErrExhausted) {
						t.Error(err)
						return
					}
					resets.Lock()
					m.Reset()
					resets.Unlock()
					continue
				}
				switch tk.Model() {
				case "a", "b", "c", "d":
				default:
					t.Errorf("routed to %q", tk.Model())
					resets.RUnlock()
					return
				}
				if tk.IsProbe() {
					probes.Add(1)
					if n := live.Add(1); n != 1 {
						t.Errorf("%d probes in flight", n)
						resets.RUnlock()
						return
					}
				}
				if (g+i)%97 == 0 {
					clk.Advance(time.Second)
				}
				if tk.IsProbe() {
					live.Add(-1)
				}
				resets.RUnlock()
				switch v := rng.IntN(20); {
				case v < 7:
					tk.Success()
				case v < 16:
					tk.Failure(Kind(v % 2))
				default:
					tk.Cancel()
				}
				_ = m.ActiveModel()
			}
		})
	}
	wg.Wait()
	if transitions.Load() == 0 || probes.Load() == 0 {
		t.Fatalf("%d transitions, %d probes: the test exercised nothing", transitions.Load(), probes.Load())
	}
	t.Logf("%d transitions, %d probes", transitions.Load(), probes.Load())
}
