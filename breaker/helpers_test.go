package breaker

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// t0 is the fake clocks' starting instant.
var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fakeClock is a manual clock safe for concurrent use.
type fakeClock struct{ off atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return t0.Add(time.Duration(c.off.Load())) }
func (c *fakeClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// fixture is a breaker on a fake clock that records its state changes.
type fixture struct {
	t      *testing.T
	clock  *fakeClock
	b      *Breaker
	mu     sync.Mutex
	events []string
}

const (
	testRecovery = 30 * time.Second
	testLease    = 10 * time.Second
)

func newFixture(t *testing.T) *fixture { t.Helper(); return newFixtureWith(t, nil) }

// newFixtureWith is newFixture with settings changed by mod (if not nil).
func newFixtureWith(t *testing.T, mod func(*Settings)) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: &fakeClock{}}
	s := Settings{
		Name:             "search",
		FailureThreshold: 3,
		RecoveryDuration: testRecovery,
		ProbeTimeout:     testLease,
		Now:              f.clock.Now,
		OnStateChange: func(name string, from, to State) {
			f.mu.Lock()
			f.events = append(f.events, name+":"+from.String()+"->"+to.String())
			f.mu.Unlock()
		},
	}
	if mod != nil {
		mod(&s)
	}
	b, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	f.b = b
	return f
}

func (f *fixture) now() time.Time { return f.clock.Now() }

// takeEvents returns and clears the recorded state changes.
func (f *fixture) takeEvents() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	e := f.events
	f.events = nil
	return e
}

// allow takes the gate and fails the test on a refusal.
func (f *fixture) allow() Permit {
	f.t.Helper()
	p, err := f.b.Allow()
	if err != nil {
		f.t.Fatalf("Allow refused: %v", err)
	}
	return p
}

// refuse takes the gate and fails the test unless it is refused.
func (f *fixture) refuse() *OpenError {
	f.t.Helper()
	p, err := f.b.Allow()
	if err == nil {
		f.t.Fatalf("Allow granted (probe=%v), want a refusal", p.IsProbe())
	}
	var oe *OpenError
	if !errors.As(err, &oe) || !errors.Is(err, ErrOpen) {
		f.t.Fatalf("refusal %T %v is not an *OpenError matching ErrOpen", err, err)
	}
	if p != (Permit{}) {
		f.t.Fatalf("refusal returned a non-zero permit %+v", p)
	}
	return oe
}

// fail records n failures through fresh permits.
func (f *fixture) fail(n int) {
	f.t.Helper()
	for range n {
		f.allow().Failure()
	}
}

// trip opens the breaker from Closed and clears the events.
func (f *fixture) trip() {
	f.t.Helper()
	f.fail(3)
	if st := f.b.State(); st != Open {
		f.t.Fatalf("after 3 failures state %v, want open", st)
	}
	f.takeEvents()
}

// probe trips the breaker, waits out the cooldown and takes the probe.
func (f *fixture) probe() Permit {
	f.t.Helper()
	f.trip()
	f.clock.Advance(testRecovery)
	p := f.allow()
	if !p.IsProbe() {
		f.t.Fatal("first gate call after the cooldown is not the probe")
	}
	f.takeEvents()
	return p
}

// want checks the snapshot.
func (f *fixture) want(st State, failures int, lastFailure, probeStart time.Time) {
	f.t.Helper()
	got := f.b.Snapshot()
	got.Trips, got.OpenUntil, got.Cause = 0, time.Time{}, 0 // wantTrips checks them
	want := Snapshot{State: st, ConsecutiveFailures: failures, LastFailure: lastFailure, ProbeStartedAt: probeStart}
	if got != want {
		f.t.Fatalf("snapshot\n got %+v\nwant %+v", got, want)
	}
	if s := f.b.State(); s != st {
		f.t.Fatalf("State() = %v, snapshot says %v", s, st)
	}
}

// wantEvents checks (and clears) the recorded state changes.
func (f *fixture) wantEvents(want ...string) {
	f.t.Helper()
	got := f.takeEvents()
	if len(got) != len(want) {
		f.t.Fatalf("events %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			f.t.Fatalf("events %q, want %q", got, want)
		}
	}
}
