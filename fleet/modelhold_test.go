package fleet

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// holdFleet is two processes' Managers attached under one name on srv, on a
// virtual store clock.
func holdFleet(t *testing.T, srv *redistest.Server, clock *atomic.Int64, name string, set fallback.Settings) []*fallback.Manager {
	t.Helper()
	var ms []*fallback.Manager
	for range 2 {
		s := newFakeStore(t, srv, Options{Prefix: "hold"}, clock.Load)
		set.Backend = s.ModelBackend(name)
		m, err := fallback.New(set)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// TestFleetHold: a hold on one replica reaches the other through its
// mirror (no call needed), shows the same end and reason everywhere, sends
// no probe before its end, and ends by itself at the same instant for both;
// then exactly one probe goes out for the fleet (FLEET rev 3).
func TestFleetHold(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	ms := holdFleet(t, srv, &clock, "held", fallback.Settings{Primary: "a", Chain: []string{"b"}})
	until := time.UnixMicro(clock.Load() + 2_000_000)
	ms[0].Hold(until, "INC-42")
	eventually(t, time.Second, "replica 2 routes around the held primary", func() bool { return ms[1].ActiveModel() == "b" })
	for i, m := range ms {
		s := m.Snapshot()
		if s.State != fallback.Fallback || !s.HoldUntil.Equal(until) || s.HoldReason != "INC-42" ||
			!s.CooldownEnds.Equal(until) || s.CooldownCause != fallback.CauseManual {
			t.Fatalf("replica %d snapshot %+v", i+1, s)
		}
	}
	clock.Store(until.UnixMicro() - 1)
	for i, m := range ms {
		if tk, err := m.Begin(); err != nil || tk.Model() != "b" {
			t.Fatalf("replica %d a µs before the hold's end: %q, %v", i+1, tk.Model(), err)
		}
	}
	clock.Store(until.UnixMicro())
	p1, _ := ms[1].Begin()
	p0, _ := ms[0].Begin()
	if !p1.IsProbe() || p0.IsProbe() || p0.Model() != "b" {
		t.Fatalf("at the hold's end: replica 2 %q probe %v, replica 1 %q probe %v; want one probe", p1.Model(), p1.IsProbe(), p0.Model(), p0.IsProbe())
	}
}

// TestFleetHoldNoChainAndRelease: a held model with no chain is refused on
// every replica (Held) until a release on the other replica, after which
// the next turn probes.
func TestFleetHoldNoChainAndRelease(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	var mu sync.Mutex
	var events []fallback.Transition
	ms := holdFleet(t, srv, &clock, "solo", fallback.Settings{Primary: "a", OnTransition: func(tr fallback.Transition) {
		mu.Lock()
		events = append(events, tr)
		mu.Unlock()
	}})
	ms[0].Hold(time.UnixMicro(clock.Load()+time.Hour.Microseconds()), "maint")
	eventually(t, time.Second, "replica 2 sees the hold", func() bool { return !ms[1].Snapshot().HoldUntil.IsZero() })
	eventually(t, time.Second, "both replicas report primary -> fallback (\"a\" -> \"\")", func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, e := range events {
			if e.From == fallback.Primary && e.To == fallback.Fallback && e.FromModel == "a" && e.ToModel == "" {
				n++
			}
		}
		return n == 2
	})
	for i, m := range ms {
		_, err := m.Begin()
		var e *fallback.ExhaustedError
		if !errors.As(err, &e) || !e.Held || e.RetryIn != time.Hour {
			t.Fatalf("replica %d Begin while held: %v", i+1, err)
		}
		if m.ActiveModel() != "" || (&fallback.Attempts{}).Usable(m) {
			t.Fatalf("replica %d: ActiveModel %q or Usable while held", i+1, m.ActiveModel())
		}
	}
	ms[1].Release()
	eventually(t, time.Second, "replica 1 sees the release", func() bool { return ms[0].Snapshot().HoldUntil.IsZero() })
	if tk, err := ms[0].Begin(); err != nil || !tk.IsProbe() {
		t.Fatalf("after Release: %q probe %v, %v", tk.Model(), tk.IsProbe(), err)
	}
}

// TestFleetDisableWithEnd: a disable with an end and a reason reaches every
// replica, and ends by itself at the same store instant, on the lock-free
// route too.
func TestFleetDisableWithEnd(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	ms := holdFleet(t, srv, &clock, "dis", fallback.Settings{Primary: "a", Chain: []string{"b", "c"}, TripThreshold: 1})
	tk, _ := ms[0].Begin()
	tk.Failure(fallback.Transient)
	until := time.UnixMicro(clock.Load() + 500_000)
	if err := ms[0].Disable("b", until, "flaky"); err != nil {
		t.Fatal(err)
	}
	if err := ms[0].Disable("a", until, ""); !errors.Is(err, fallback.ErrNotInChain) {
		t.Fatalf("Disable of the primary = %v", err)
	}
	eventually(t, time.Second, "replica 2 routes to c", func() bool { return ms[1].ActiveModel() == "c" })
	if e := ms[1].Snapshot().Chain[0]; e.Available || !e.DisabledUntil.Equal(until) || e.DisabledReason != "flaky" {
		t.Fatalf("replica 2 sees b as %+v", e)
	}
	if tk, _ := ms[1].Begin(); tk.Model() != "c" {
		t.Fatalf("replica 2 Begin = %q, want c", tk.Model())
	}
	clock.Store(until.UnixMicro())
	for i, m := range ms {
		if e := m.Snapshot().Chain[0]; !e.Available || e.DisabledReason != "" {
			t.Fatalf("replica %d after the end sees b as %+v", i+1, e)
		}
		if tk, err := m.Begin(); err != nil || tk.Model() != "b" {
			t.Fatalf("replica %d Begin after the disable's end = %q, %v", i+1, tk.Model(), err)
		}
	}
	if err := ms[1].Disable("c", time.Time{}, "for good"); err != nil {
		t.Fatal(err)
	}
	clock.Add(time.Hour.Microseconds())
	if err := ms[0].Enable("b"); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Second, "c still disabled, with its reason", func() bool {
		e := ms[0].Snapshot().Chain[1]
		return !e.Available && e.DisabledUntil.IsZero() && e.DisabledReason == "for good"
	})
}

// TestFleetHoldSurvivesRestart: a hold and a disable live in the store: new
// processes (every replica restarted) read them, reasons included.
func TestFleetHoldSurvivesRestart(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	set := fallback.Settings{Primary: "a", Chain: []string{"b", "c"}}
	until := time.UnixMicro(clock.Load() + 10_000_000)
	old := holdFleet(t, srv, &clock, "keep", set)
	old[0].Hold(until, "INC-1")
	if err := old[1].Disable("b", until, "flaky"); err != nil {
		t.Fatal(err)
	}
	// The state keeps the width of revision 3 (18 + 2n integers), so that a
	// process of revision 3 still reads it during a rolling upgrade; the
	// disables' ends live beside it.
	if p, err := srv.Command("HGET", "{hold:model:keep}", "p"); err != nil || len(strings.Fields(p)) != 18+2*2 {
		t.Fatalf("state %q, %v: want 22 integers", p, err)
	}
	if d, err := srv.Command("HGET", "{hold:model:keep}", "d"); err != nil || d != strconv.FormatInt(until.UnixMicro(), 10)+" 0" {
		t.Fatalf("disables' ends %q, %v", d, err)
	}
	for range 2 { // both generations of processes see it; the old ones are never closed in between
		ms := holdFleet(t, srv, &clock, "keep", set)
		for i, m := range ms {
			s := m.Snapshot()
			if !s.HoldUntil.Equal(until) || s.HoldReason != "INC-1" || s.Chain[0].DisabledReason != "flaky" ||
				!s.Chain[0].DisabledUntil.Equal(until) || m.ActiveModel() != "c" {
				t.Fatalf("restarted replica %d: %+v", i+1, s)
			}
		}
	}
}

// TestFleetHoldWhileStoreDown: a replica running locally while the store is
// down keeps the fleet's hold (seeded from its mirror) and applies its own
// hold locally; when the store answers again the store's state wins.
func TestFleetHoldWhileStoreDown(t *testing.T) {
	srv := redistest.Start(t)
	set := fallback.Settings{Primary: "a", Chain: []string{"b"}}
	s, err := New(Options{Client: newClient(t, srv.Addr()), Prefix: "hd", StoreTimeout: faultTimeout, RetryInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	set.Backend = s.ModelBackend("m")
	m, err := fallback.New(set)
	if err != nil {
		t.Fatal(err)
	}
	m.Hold(time.Now().Add(time.Hour), "INC-9")
	if err := srv.Save(); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	eventually(t, 2*time.Second, "a call finds the store down", func() bool {
		_, _ = m.Begin()
		return s.Check(t.Context()) != nil
	})
	if sn := m.Snapshot(); sn.State != fallback.Fallback || sn.HoldReason != "INC-9" || sn.CooldownCause != fallback.CauseManual ||
		time.Until(sn.HoldUntil) < 59*time.Minute || m.ActiveModel() != "b" {
		t.Fatalf("local while down: %+v", sn)
	}
	m.Release() // applied locally
	if tk, err := m.Begin(); err != nil || !tk.IsProbe() {
		t.Fatalf("local Release: %q probe %v, %v", tk.Model(), tk.IsProbe(), err)
	}
	srv.Restart(true)
	eventually(t, 3*time.Second, "the store's hold again", func() bool {
		return s.Up() && m.Snapshot().HoldReason == "INC-9" && m.ActiveModel() == "b"
	})
}

// TestFleetReconfigure: a reload that keeps the primary and the chain keeps
// the shared breaker: the same keys, no state written, the cooldown's end
// unchanged; the new settings apply to the next trip. Another chain is
// refused.
func TestFleetReconfigure(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	ms := holdFleet(t, srv, &clock, "rc", fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1})
	tk, _ := ms[0].Begin()
	tk.Failure(fallback.Transient)
	eventually(t, time.Second, "tripped everywhere", func() bool { return ms[1].State() == fallback.Fallback })
	ends := ms[1].Snapshot().CooldownEnds
	key := "{hold:model:rc}"
	before, err := srv.Command("HGET", key, "p")
	if err != nil {
		t.Fatal(err)
	}
	if err := ms[1].Reconfigure(fallback.Settings{Primary: "a", Chain: []string{"b"}, RecoveryTimeout: time.Second, TripThreshold: 1}); err != nil {
		t.Fatal(err)
	}
	if after, _ := srv.Command("HGET", key, "p"); after != before {
		t.Fatalf("Reconfigure wrote the state:\n%s\n%s", before, after)
	}
	if got := ms[1].Snapshot().CooldownEnds; !got.Equal(ends) {
		t.Fatalf("cooldown end moved from %v to %v", ends, got)
	}
	clock.Store(ends.UnixMicro())
	probe, err := ms[1].Begin()
	if err != nil || !probe.IsProbe() {
		t.Fatalf("at the cooldown's end: %q probe %v, %v", probe.Model(), probe.IsProbe(), err)
	}
	probe.Failure(fallback.RateLimit) // re-trip on replica 2: its new RecoveryTimeout
	if got := ms[1].Snapshot().CooldownEnds; !got.Equal(ends.Add(time.Second)) {
		t.Fatalf("after the re-trip the cooldown ends %v, want %v", got, ends.Add(time.Second))
	}
	err = ms[1].Reconfigure(fallback.Settings{Primary: "a", Chain: []string{"c"}})
	if !errors.Is(err, fallback.ErrChainChanged) {
		t.Fatalf("Reconfigure with another chain = %v", err)
	}
}

// TestStoreName: one name per primary and chain; any change gives another.
func TestStoreName(t *testing.T) {
	base := StoreName("smart", "a", []string{"b", "c"})
	if base != StoreName("smart", "a", []string{"b", "c"}) || len(base) != len("smart@")+16 {
		t.Fatalf("StoreName = %q", base)
	}
	seen := map[string]string{base: "base"}
	for i, other := range []string{
		StoreName("smart", "a", []string{"c", "b"}),
		StoreName("smart", "a", []string{"b"}),
		StoreName("smart", "a", nil),
		StoreName("smart", "ab", []string{"c"}),
		StoreName("smart", "a", []string{"bc"}),
		StoreName("fast", "a", []string{"b", "c"}),
	} {
		if prev, dup := seen[other]; dup {
			t.Fatalf("case %d: %q repeats %s", i, other, prev)
		}
		seen[other] = strconv.Itoa(i)
	}
}
