package fleet

import (
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// scriptCalls returns how many scripts the server has run (EVALSHA + EVAL).
func scriptCalls(t testing.TB, srv *redistest.Server) int64 {
	t.Helper()
	n, err := srv.Scripts()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRoundTrips counts script calls with INFO commandstats: a quiet Closed
// gate and its success cost none, a failure exactly one, a refusal before the
// cooldown's end none, and pure reads none.
func TestRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	s := startStore(t, srv, Options{})
	b, err := s.Tool(breaker.Settings{Name: "rt", FailureThreshold: 2, RecoveryDuration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func()
		want int64
	}{
		{"1000 quiet closed gates and successes", func() {
			for range 1000 {
				p, err := b.Allow()
				if err != nil {
					t.Fatal(err)
				}
				p.Success()
			}
		}, 0},
		{"one failure", func() { p, _ := b.Allow(); p.Failure() }, 1},
		{"a gate with a failure pending", func() { p, _ := b.Allow(); p.Cancel() }, 1},
		{"a success with a failure pending", func() { p, _ := b.Allow(); p.Success() }, 2},
		{"the tripping failure", func() { p, _ := b.Allow(); p.Failure(); p, _ = b.Allow(); p.Failure() }, 3},
		{"1000 refusals before the cooldown's end", func() {
			for range 1000 {
				if _, err := b.Allow(); !errors.Is(err, breaker.ErrOpen) {
					t.Fatal(err)
				}
			}
		}, 0},
		{"1000 pure reads", func() {
			for range 1000 {
				_, _, _ = b.WouldAllow(), b.State(), b.Snapshot()
			}
		}, 0},
	}
	for _, st := range steps {
		before := scriptCalls(t, srv)
		st.do()
		if got := scriptCalls(t, srv) - before; got != st.want {
			t.Errorf("%s: %d script calls, want %d", st.name, got, st.want)
		}
	}
}

// TestTripPropagation bounds docs/FLEET.md §1.5: the time from the tripping
// failure's reply on one process until another process's mirror reads Open.
// (The benchmarks report p50/p99; this test only bounds the worst case
// loosely, for -race on a busy machine.)
func TestTripPropagation(t *testing.T) {
	srv := redistest.Start(t)
	a, err := startStore(t, srv, Options{}).Tool(breaker.Settings{Name: "prop", FailureThreshold: 1, RecoveryDuration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	b, err := startStore(t, srv, Options{}).Tool(breaker.Settings{Name: "prop", FailureThreshold: 1, RecoveryDuration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var delays []time.Duration
	for range 20 {
		a.Reset()
		eventually(t, time.Second, "closed again", func() bool { return b.State() == breaker.Closed })
		p, _ := a.Allow()
		p.Failure()
		start := time.Now()
		for b.State() != breaker.Open {
			if time.Since(start) > time.Second {
				t.Fatal("the trip did not reach the other process within 1s")
			}
		}
		delays = append(delays, time.Since(start))
		// a permit granted in the window carries the old generation: its success
		// is ignored by the store (the breaker stays open)
	}
	sort.Slice(delays, func(i, j int) bool { return delays[i] < delays[j] })
	t.Logf("trip propagation after the reply: p50 %v, max %v", delays[len(delays)/2], delays[len(delays)-1])
	if delays[len(delays)/2] > 100*time.Millisecond {
		t.Fatalf("median propagation %v", delays[len(delays)/2])
	}
}

// TestModelRoundTrips: routing in Primary and in Fallback before the
// cooldown's end, and successes that change nothing, cost no round trip; a
// failed turn costs one.
func TestModelRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	s := startStore(t, srv, Options{})
	m, err := s.Model("rt", fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1, RecoveryTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	turns := func(want string) func() {
		return func() {
			for range 1000 {
				tk, err := m.Begin()
				if err != nil || tk.Model() != want {
					t.Fatalf("Begin = %q, %v; want %q", tk.Model(), err, want)
				}
				tk.Success()
			}
		}
	}
	for _, st := range []struct {
		name string
		do   func()
		want int64
	}{
		{"1000 turns in Primary", turns("a"), 0},
		{"the tripping failure", func() { tk, _ := m.Begin(); tk.Failure(fallback.Transient) }, 1},
		{"1000 turns in Fallback before the cooldown's end", turns("b"), 0},
		{"1000 pure reads", func() {
			for range 1000 {
				_, _, _, _ = m.State(), m.ActiveModel(), m.Snapshot(), m.FallbackActivated()
			}
		}, 0},
	} {
		before := scriptCalls(t, srv)
		st.do()
		if got := scriptCalls(t, srv) - before; got != st.want {
			t.Errorf("%s: %d script calls, want %d", st.name, got, st.want)
		}
	}
}
