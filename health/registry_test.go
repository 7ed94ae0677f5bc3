package health

import (
	"slices"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// TestLookupsCreateNothing: polling names the registry has never seen (a
// dashboard with a typo) adds no tool to Summary; only the gate creates.
func TestLookupsCreateNothing(t *testing.T) {
	f := newFixture(t)
	f.call(t, "search", 0, nil)
	before := f.r.Summary()
	for _, name := range []string{"serach", "", "web"} {
		if b := f.r.Breaker(name); b != nil {
			t.Fatalf("Breaker(%q) = %p, want nil for an unknown tool", name, b)
		}
		// A nil breaker reads as a fresh closed one.
		b := f.r.Breaker(name)
		if b.State() != breaker.Closed || !b.WouldAllow() || b.RetryIn() != 0 || b.Snapshot() != (breaker.Snapshot{}) || b.Name() != "" {
			t.Fatalf("nil breaker reads %v %v %v %+v", b.State(), b.WouldAllow(), b.RetryIn(), b.Snapshot())
		}
		if s := f.r.Stats(name); s != freshStats {
			t.Fatalf("Stats(%q) = %+v", name, s)
		}
		if st := f.r.Status(name); st != Healthy {
			t.Fatalf("Status(%q) = %v", name, st)
		}
		if !f.r.WouldAllow(name) {
			t.Fatalf("WouldAllow(%q) = false", name)
		}
		if f.r.Reset(name) {
			t.Fatalf("Reset(%q) found an unknown tool", name)
		}
	}
	if _, err := NewRouter(f.r, map[string][]string{"search": {"web"}}).Resolve("serach"); err != nil {
		t.Fatal(err)
	}
	if after := f.r.Summary(); !slices.Equal(before, after) {
		t.Fatalf("Summary after lookups\n got %+v\nwant %+v", after, before)
	}
	if p, err := f.r.Allow("web"); err != nil {
		t.Fatal(err)
	} else {
		p.Cancel()
	}
	if f.r.Breaker("web") == nil || len(f.r.Summary()) != 2 {
		t.Fatal("the gate did not create the tool")
	}
}

// TestRegistryReset: a manual Reset closes the tool's breaker (the callback
// fires with the tool's name), keeps its Stats, and creates nothing.
func TestRegistryReset(t *testing.T) {
	f := newFixture(t)
	f.trip(t, "a")
	stats := f.r.Stats("a")
	f.mu.Lock()
	f.events = nil
	f.mu.Unlock()
	if !f.r.Reset("a") {
		t.Fatal("Reset of a known tool reported unknown")
	}
	if s := f.r.Breaker("a").Snapshot(); s != (breaker.Snapshot{State: breaker.Closed}) {
		t.Fatalf("snapshot after Reset %+v", s)
	}
	if f.r.Stats("a") != stats {
		t.Fatal("Reset changed the stats")
	}
	if st := f.r.Status("a"); st != Unhealthy { // by score: the stats are kept
		t.Fatalf("status %v", st)
	}
	f.mu.Lock()
	ev := slices.Clone(f.events)
	f.mu.Unlock()
	if !slices.Equal(ev, []string{"a:open->closed"}) {
		t.Fatalf("events %q", ev)
	}
	if got, _ := NewRouter(f.r, map[string][]string{"a": {"b"}}).Resolve("a"); got != "a" {
		t.Fatalf("Resolve after Reset = %q", got)
	}
}

// TestStaleFailureRecordedInStats: a stale failure changes nothing in the
// breaker, but the stats still record the call (they describe calls).
func TestStaleFailureRecordedInStats(t *testing.T) {
	f := newFixture(t)
	hung, err := f.r.Allow("a")
	if err != nil {
		t.Fatal(err)
	}
	f.call(t, "a", 0, errDown)
	f.call(t, "a", time.Second, nil) // counted: resets the count
	before := f.r.Breaker("a").Snapshot()
	f.clock.Advance(time.Second)
	hung.Failure()
	if s := f.r.Breaker("a").Snapshot(); s != before || s.ConsecutiveFailures != 0 {
		t.Fatalf("a stale failure changed the breaker: %+v -> %+v", before, s)
	}
	if s := f.r.Stats("a"); s.Calls != 3 || s.Failures != 2 || s.MaxDuration != 2*time.Second {
		t.Fatalf("stats %+v; the stale call must be recorded", s)
	}
}

// TestUnavailableTextPrecision: the router's refusal says when to retry with
// sub-second precision below 10s.
func TestUnavailableTextPrecision(t *testing.T) {
	for _, tc := range []struct {
		cooldown time.Duration
		want     string
	}{
		{10 * time.Millisecond, "retry in 10ms"},
		{250 * time.Millisecond, "retry in 250ms"},
		{9500 * time.Millisecond, "retry in 9.5s"},
		{90 * time.Second, "retry in 1m30s"},
	} {
		t.Run(tc.cooldown.String(), func(t *testing.T) {
			now := t0
			r, err := NewRegistry(breaker.Settings{FailureThreshold: 1, RecoveryDuration: tc.cooldown, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range []string{"search", "web"} {
				p, _ := r.Allow(tool)
				p.Failure()
			}
			_, err = NewRouter(r, map[string][]string{"search": {"web"}}).Resolve("search")
			want := `tool temporarily unavailable: circuit breaker open for "search" and its backup "web"; ` + tc.want
			if err == nil || err.Error() != want {
				t.Fatalf("refusal %v, want %q", err, want)
			}
			_, err = NewRouter(r, nil).Resolve("search")
			want = `tool temporarily unavailable: circuit breaker open for "search"; ` + tc.want
			if err == nil || err.Error() != want {
				t.Fatalf("refusal %v, want %q", err, want)
			}
		})
	}
}
