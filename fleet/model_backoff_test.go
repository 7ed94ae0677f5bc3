package fleet

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// twin is one model breaker twice: a fallback.Manager on the fleet store
// (a real redis-server, the store's clock virtual) and a local
// fallback.Manager on the same virtual clock. Every step goes to both, and
// after it their snapshots must be equal (FLEET rev 4: n and closedAt are
// part of the shared state).
type twin struct {
	t          *testing.T
	clock      *atomic.Int64 // µs
	fleet, ref *fallback.Manager
}

func newTwin(t *testing.T, srv *redistest.Server, name string, s fallback.Settings) *twin {
	t.Helper()
	var clock atomic.Int64
	clock.Store(1_900_000_000_000_000)
	store := newFakeStore(t, srv, Options{}, clock.Load)
	s.Now = func() time.Time { return time.UnixMicro(clock.Load()) }
	rs := s
	s.Backend = store.ModelBackend(name)
	fm, err := fallback.New(s)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := fallback.New(rs)
	if err != nil {
		t.Fatal(err)
	}
	return &twin{t: t, clock: &clock, fleet: fm, ref: ref}
}

func (w *twin) now() time.Time          { return time.UnixMicro(w.clock.Load()) }
func (w *twin) advance(d time.Duration) { w.clock.Add(d.Microseconds()); w.same("advance") }

// same checks that the two snapshots agree.
func (w *twin) same(step string) {
	w.t.Helper()
	f, r := w.fleet.Snapshot(), w.ref.Snapshot()
	if len(f.Chain) == 0 && len(r.Chain) == 0 {
		f.Chain, r.Chain = nil, nil
	}
	if !reflect.DeepEqual(f, r) {
		w.t.Fatalf("after %s the fleet's snapshot\n %+v\nthe local one\n %+v", step, f, r)
	}
}

// turn begins a turn on both, checks the routing, and settles it with do.
func (w *twin) turn(model string, probe bool, do func(fallback.Turn)) {
	w.t.Helper()
	for _, m := range []*fallback.Manager{w.fleet, w.ref} {
		tk, err := m.Begin()
		if err != nil || tk.Model() != model || tk.IsProbe() != probe {
			w.t.Fatalf("Begin = %q probe %v (%v), want %q probe %v", tk.Model(), tk.IsProbe(), err, model, probe)
		}
		if do != nil {
			do(tk)
		}
	}
	w.same(fmt.Sprintf("a turn on %q", model))
}

func (w *twin) trip() {
	w.t.Helper()
	for range 3 {
		w.turn("a", false, func(t fallback.Turn) { t.Failure(fallback.Transient) })
	}
}

// closeAgain waits out the cooldown and closes on one probe success.
func (w *twin) closeAgain() {
	w.t.Helper()
	w.advance(w.ref.Snapshot().CooldownEnds.Sub(w.now()))
	w.turn("a", true, fallback.Turn.Success)
}

func (w *twin) want(n int, cool time.Duration, cause fallback.Cause) {
	w.t.Helper()
	s := w.fleet.Snapshot()
	if s.Trips != n || s.CooldownEnds.Sub(s.TrippedAt) != cool || s.CooldownCause != cause {
		w.t.Fatalf("fleet: Trips %d, cooldown %v (%v); want %d, %v (%v)", s.Trips, s.CooldownEnds.Sub(s.TrippedAt), s.CooldownCause, n, cool, cause)
	}
}

// TestModelBackoffRows runs the rows of docs/SEMANTICS.md §9.1 and §9.2
// for the model breaker (fallback's TestBackoffTable) with the fleet store:
// the same trip counts, cooldowns and causes as the local breaker, step by
// step.
func TestModelBackoffRows(t *testing.T) {
	srv := redistest.Start(t)
	fail := func(k fallback.Kind) func(fallback.Turn) { return func(t fallback.Turn) { t.Failure(k) } }
	rows := []struct {
		name string
		set  func(*fallback.Settings)
		run  func(w *twin)
	}{
		{"Primary → Fallback (trip): n + 1, cooldown c(n)", nil, func(w *twin) {
			w.trip()
			w.want(1, 10*time.Second, fallback.CauseRecoveryTimeout)
			w.closeAgain()
			w.trip()
			w.want(2, 20*time.Second, fallback.CauseBackoff)
			w.closeAgain()
			w.trip()
			w.want(3, 35*time.Second, fallback.CauseBackoff)
		}},
		{"Recovering → Fallback (TripThreshold-th transient probe failure), and below it", func(s *fallback.Settings) { s.TripThreshold = 2 }, func(w *twin) {
			w.turn("a", false, fail(fallback.Transient))
			w.turn("a", false, fail(fallback.Transient))
			w.advance(10 * time.Second)
			w.turn("a", true, fail(fallback.Transient)) // below: probation continues, n kept
			w.turn("a", true, fail(fallback.Transient))
			w.want(2, 20*time.Second, fallback.CauseBackoff)
		}},
		{"Recovering → Fallback (a primary that stays down): n keeps rising however long open", func(s *fallback.Settings) {
			s.TripThreshold = 1
		}, func(w *twin) {
			w.turn("a", false, fail(fallback.Transient))
			for n, cool := range []time.Duration{20 * time.Second, 35 * time.Second, 35 * time.Second} {
				w.advance(w.ref.Snapshot().CooldownEnds.Sub(w.now()))
				w.turn("a", true, fail(fallback.Transient))
				w.want(n+2, cool, fallback.CauseBackoff)
			}
		}},
		{"Recovering → Fallback (lapsed probe lease): n + 1, from the lease end", func(s *fallback.Settings) {
			s.TripThreshold, s.ProbeTimeout = 1, 3*time.Second
		}, func(w *twin) {
			w.turn("a", false, fail(fallback.Transient))
			w.advance(10 * time.Second)
			w.turn("a", true, nil) // lost
			w.advance(3 * time.Second)
			w.want(2, 20*time.Second, fallback.CauseBackoff)
		}},
		{"rate-limited probe, quota, hint, hold: n unchanged; a later hint wins", func(s *fallback.Settings) {
			s.QuotaCooldown, s.MaxRecoveryTimeout = 15*time.Second, time.Minute // n resets only after a minute closed
		}, func(w *twin) {
			w.trip()
			w.closeAgain()
			w.trip() // n = 2
			w.advance(20 * time.Second)
			w.turn("a", true, fail(fallback.RateLimit))
			w.want(2, 20*time.Second, fallback.CauseBackoff)
			w.advance(20 * time.Second)
			w.turn("a", true, func(t fallback.Turn) { t.Fail(fallback.Failure{Kind: fallback.Quota}) })
			w.want(2, 20*time.Second, fallback.CauseQuota)
			w.advance(20 * time.Second)
			w.turn("a", true, fallback.Turn.Success)
			w.turn("a", false, fail(fallback.Transient))
			w.turn("a", false, fail(fallback.Transient))
			hint := w.now().Add(time.Minute)
			w.turn("a", false, func(t fallback.Turn) { t.Fail(fallback.Failure{Kind: fallback.RateLimit, Hint: hint}) })
			w.want(3, time.Minute, fallback.CauseHint)
			w.fleet.Hold(w.now().Add(time.Minute), "INC-7")
			w.ref.Hold(w.now().Add(time.Minute), "INC-7")
			w.same("a hold")
		}},
		{"closedAt and the lazy reset; Reset; Reconfigure keeps n", nil, func(w *twin) {
			w.trip()
			w.closeAgain()
			w.trip()
			w.closeAgain()
			w.advance(35 * time.Second) // a read shows 0
			w.trip()
			w.want(1, 10*time.Second, fallback.CauseRecoveryTimeout)
			w.closeAgain()
			w.trip()
			s := backoffTwinSettings()
			s.RecoveryBackoff, s.MaxRecoveryTimeout = 3, time.Hour
			for _, m := range []*fallback.Manager{w.fleet, w.ref} {
				if err := m.Reconfigure(s); err != nil {
					w.t.Fatal(err)
				}
			}
			w.same("Reconfigure")
			w.closeAgain()
			w.trip()
			w.want(3, 90*time.Second, fallback.CauseBackoff)
			w.fleet.Reset()
			w.ref.Reset()
			w.same("Reset")
			w.trip()
			w.want(1, 10*time.Second, fallback.CauseRecoveryTimeout)
		}},
		{"Fallback → Fallback (chain advance) and a refusal: n unchanged", nil, func(w *twin) {
			w.trip()
			for _, model := range []string{"b", "b", "c", "c"} {
				w.turn(model, false, fail(fallback.Transient))
			}
			for _, m := range []*fallback.Manager{w.fleet, w.ref} {
				if _, err := m.Begin(); err == nil {
					w.t.Fatal("Begin with the chain spent: no refusal")
				}
			}
			w.same("a refusal")
			w.want(1, 10*time.Second, fallback.CauseRecoveryTimeout)
		}},
		{"backoff off: n kept and reported, the base cooldown; Primary: a slow success is a success", func(s *fallback.Settings) {
			s.RecoveryBackoff, s.SlowCallAfter = 1, time.Second
		}, func(w *twin) {
			w.trip()
			w.closeAgain()
			w.turn("a", false, func(t fallback.Turn) { t.SuccessAfter(time.Hour) })
			w.trip()
			w.want(2, 10*time.Second, fallback.CauseRecoveryTimeout)
		}},
		{"Recovering → Fallback (slow probe): at once whatever the streak, n + 1", func(s *fallback.Settings) {
			s.RecoverySuccessesNeeded, s.SlowCallAfter = 3, time.Second
		}, func(w *twin) {
			w.trip()
			w.advance(10 * time.Second)
			w.turn("a", true, func(t fallback.Turn) { t.SuccessAfter(time.Second) })
			w.turn("a", true, func(t fallback.Turn) { t.SuccessAfter(2 * time.Second) })
			w.want(2, 20*time.Second, fallback.CauseBackoff)
		}},
	}
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s := backoffTwinSettings()
			if row.set != nil {
				row.set(&s)
			}
			row.run(newTwin(t, srv, fmt.Sprint("backoff", i), s))
		})
	}
}

// backoffTwinSettings are fallback's backoffSettings: base 10 s, factor 2,
// cap 35 s, one probe success closes.
func backoffTwinSettings() fallback.Settings {
	return fallback.Settings{Primary: "a", Chain: []string{"b", "c"}, RecoveryTimeout: 10 * time.Second,
		RecoveryBackoff: 2, MaxRecoveryTimeout: 35 * time.Second, RecoverySuccessesNeeded: 1}
}

// TestModelStoreKilledKeepsTrips (FLEET rev 4): a process whose store dies
// seeds its local breaker with the fleet's trip count, so the local
// breaker's next opening backs off from there, not from 1.
func TestModelStoreKilledKeepsTrips(t *testing.T) {
	srv := redistest.Start(t)
	set := fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1, RecoveryTimeout: 50 * time.Millisecond,
		RecoverySuccessesNeeded: 1, RecoveryBackoff: 2, MaxRecoveryTimeout: 10 * time.Second}
	s, err := New(Options{Client: newClient(t, srv.Addr()), Prefix: "mt", StoreTimeout: faultTimeout, RetryInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	m, err := s.Model("chat", set)
	if err != nil {
		t.Fatal(err)
	}
	tk, _ := m.Begin()
	tk.Failure(fallback.Transient)
	eventually(t, time.Second, "the cooldown's end", func() bool { return m.ActiveModel() == "a" })
	if tk, _ = m.Begin(); !tk.IsProbe() {
		t.Fatal("no probe after the cooldown")
	}
	tk.Success()
	tk, _ = m.Begin()
	tk.Failure(fallback.Transient) // n = 2: 100 ms
	if s := m.Snapshot(); s.Trips != 2 || s.CooldownCause != fallback.CauseBackoff {
		t.Fatalf("shared: Trips %d (%v), want 2 (backoff)", s.Trips, s.CooldownCause)
	}
	srv.Kill()
	eventually(t, 2*time.Second, "local mode", func() bool { return m.Mode() == LocalMode })
	if s := m.Snapshot(); s.Trips != 2 || s.State != fallback.Fallback {
		t.Fatalf("seeded: %v with Trips %d, want fallback with 2", s.State, s.Trips)
	}
}
