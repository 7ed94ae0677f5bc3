package fallback

import (
	"errors"
	"strconv"
	"testing"
	"time"
)

// One test per rev-3 row of SEMANTICS §3 and §7.

func TestTripCooldownEndsAtTheLatestHint(t *testing.T) {
	for _, tt := range []struct {
		name  string
		hints []time.Duration // of the three failures, from t0 (0: none)
		ends  time.Duration
		cause Cause
	}{
		{"no hint", []time.Duration{0, 0, 0}, time.Minute, CauseRecoveryTimeout},
		{"short hint", []time.Duration{30 * time.Second, 0, 0}, time.Minute, CauseRecoveryTimeout},
		{"long hint early in the streak", []time.Duration{5 * time.Minute, 2 * time.Minute, 0}, 5 * time.Minute, CauseHint},
		{"long hint last", []time.Duration{0, 0, 3 * time.Minute}, 3 * time.Minute, CauseHint},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, abc())
			for _, d := range tt.hints {
				f := Failure{Kind: RateLimit}
				if d != 0 {
					f.Hint = at(d)
				}
				h.begin("a", false).Fail(f)
			}
			s := h.snap()
			if s.State != Fallback || !s.CooldownEnds.Equal(at(tt.ends)) || s.CooldownCause != tt.cause {
				t.Fatalf("snapshot %+v, want cooldown to +%v (%v)", s, tt.ends, tt.cause)
			}
			h.clk.Advance(tt.ends - time.Nanosecond)
			if e := h.begin("b", false); e.IsProbe() {
				t.Fatal("probe before the cooldown's end")
			}
			h.clk.Advance(time.Nanosecond)
			h.begin("a", true)
		})
	}
}

func TestHintsOfAnEarlierStreakDoNotCount(t *testing.T) {
	h := newHarness(t, abc())
	h.begin("a", false).Fail(Failure{Kind: RateLimit, Hint: at(time.Hour)})
	h.begin("a", false).Success() // the streak ends
	h.fail(3, Transient, "a")
	if s := h.snap(); !s.CooldownEnds.Equal(at(time.Minute)) || s.CooldownCause != CauseRecoveryTimeout {
		t.Fatalf("snapshot %+v", s)
	}
}

func TestQuotaTripsAtOnce(t *testing.T) {
	for _, tt := range []struct {
		name string
		set  Settings
		hint time.Duration
		ends time.Duration
	}{
		{"no hint: QuotaCooldown default", abc(), 0, 10 * time.Minute},
		{"no hint: QuotaCooldown set", Settings{Primary: "a", Chain: []string{"b"}, QuotaCooldown: 2 * time.Minute}, 0, 2 * time.Minute},
		{"QuotaCooldown below RecoveryTimeout", Settings{Primary: "a", Chain: []string{"b"}, QuotaCooldown: time.Second}, 0, time.Minute},
		{"hint", abc(), 30 * time.Minute, 30 * time.Minute},
		{"hint before RecoveryTimeout", abc(), 10 * time.Second, time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.set)
			f := Failure{Kind: Quota}
			if tt.hint != 0 {
				f.Hint = at(tt.hint)
			}
			h.begin("a", false).Fail(f)
			h.expectEvents(tr(Primary, Fallback, "a", "b", t0))
			if s := h.snap(); !s.CooldownEnds.Equal(at(tt.ends)) || s.CooldownCause != CauseQuota {
				t.Fatalf("snapshot %+v, want cooldown to +%v (quota)", s, tt.ends)
			}
		})
	}
}

func TestQuotaProbeRetrips(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.clk.Advance(time.Minute)
	h.begin("a", true).Fail(Failure{Kind: Quota})
	h.expectState(Fallback)
	if s := h.snap(); !s.TrippedAt.Equal(at(time.Minute)) || !s.CooldownEnds.Equal(at(11*time.Minute)) || s.CooldownCause != CauseQuota {
		t.Fatalf("snapshot %+v", s)
	}
	e := h.begin("b", false)
	e.Cancel()
	h.clk.Advance(10 * time.Minute)
	h.begin("a", true).Fail(Failure{Kind: RateLimit, Hint: at(20 * time.Minute)}) // re-trips at once until the hint
	if s := h.snap(); s.State != Fallback || !s.CooldownEnds.Equal(at(20*time.Minute)) || s.CooldownCause != CauseHint {
		t.Fatalf("snapshot %+v", s)
	}
}

func TestQuotaSpendsAnEntrysWholeBudget(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	h.take()
	h.begin("b", false).Fail(Failure{Kind: Quota})
	h.expectEvents(tr(Fallback, Fallback, "b", "c", t0))
	if s := h.snap(); s.Chain[0].Attempts != 2 || !s.Chain[0].Failed {
		t.Fatalf("entry b %+v", s.Chain[0])
	}
}

func TestExhaustedProbeAtFollowsTheCooldown(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a", Chain: []string{"b"}, MaxFailCount: 1})
	h.begin("a", false).Fail(Failure{Kind: Quota, Hint: at(7 * time.Minute)})
	h.fail(1, Transient, "b")
	e := h.exhausted()
	if !e.ProbeAt.Equal(at(7*time.Minute)) || e.RetryIn != 7*time.Minute {
		t.Fatalf("ProbeAt %v, RetryIn %v", e.ProbeAt, e.RetryIn)
	}
}

func TestTimeoutIsDatedAtItsIssue(t *testing.T) {
	h := newHarness(t, abc())
	var hung []Ticket
	for range 3 {
		hung = append(hung, h.begin("a", false))
		h.clk.Advance(time.Second)
	}
	h.clk.Advance(2 * time.Minute) // the outage ended long ago; the calls are cut now
	// Each reports how long it ran (rev 4, §8.4: Begin reads no clock).
	hung[0].Fail(Failure{Timeout: true, Elapsed: 2*time.Minute + 3*time.Second})
	hung[2].Fail(Failure{Timeout: true, Elapsed: 2*time.Minute + time.Second})
	hung[1].Fail(Failure{Timeout: true, Elapsed: 2*time.Minute + 2*time.Second}) // the trip takes the latest date of the streak
	h.expectEvents(tr(Primary, Fallback, "a", "b", at(2*time.Second)))
	if s := h.snap(); !s.TrippedAt.Equal(at(2*time.Second)) || !s.CooldownEnds.Equal(at(62*time.Second)) {
		t.Fatalf("snapshot %+v", s)
	}
	h.begin("a", true) // the cooldown has passed already: the next turn is the probe
}

func TestTimeoutOfAProbeIsDatedWhenReported(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1})
	h.trip()
	h.clk.Advance(time.Minute)
	p := h.begin("a", true)
	h.clk.Advance(30 * time.Second)
	p.Fail(Failure{Timeout: true})
	if s := h.snap(); !s.TrippedAt.Equal(at(90 * time.Second)) {
		t.Fatalf("probe timeout dated %v, want +1m30s", s.TrippedAt)
	}
}

func TestNextOneProbePerTurn(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a", Chain: []string{"b"}, MaxFailCount: 1})
	h.trip()
	h.clk.Advance(time.Minute)
	var a Attempts
	p, err := h.m.Next(&a)
	if err != nil || !p.IsProbe() {
		t.Fatalf("Next = %q probe %v, %v", p.Model(), p.IsProbe(), err)
	}
	p.Failure(Transient) // below the threshold: the slot is free again
	h.expectState(Recovering)
	tk, err := h.m.Next(&a)
	if err != nil || tk.Model() != "b" || tk.IsProbe() {
		t.Fatalf("second Next = %q probe %v, %v; want the chain", tk.Model(), tk.IsProbe(), err)
	}
	tk.Failure(Transient) // b is spent
	_, err = h.m.Next(&a)
	var e *ExhaustedError
	if !errors.As(err, &e) || !e.Probed || e.ProbeFailure != (Failure{}) || e.State != Recovering || e.RetryIn != 0 {
		t.Fatalf("third Next = %v (%+v)", err, e)
	}
	if a.Usable(h.m) {
		t.Fatal("Usable after the refusal")
	}
	h.begin("a", true) // another turn gets the free slot
}

func TestNextProbeOfAnEmptyChainEndsTheTurn(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a", TripThreshold: 1})
	h.begin("a", false).Failure(Transient)
	h.clk.Advance(time.Minute)
	var a Attempts
	p, _ := h.m.Next(&a)
	p.Fail(Failure{Kind: RateLimit, Hint: at(5 * time.Minute)}) // re-trips until the hint
	_, err := h.m.Next(&a)
	var e *ExhaustedError
	if !errors.As(err, &e) || !e.Probed || e.ProbeFailure.Kind != RateLimit || e.RetryIn != 4*time.Minute {
		t.Fatalf("Next after the failed probe = %v", err)
	}
	h.begin("a", false) // a turn without memory still goes to the primary
}

func TestNextRoutesPastSlowModels(t *testing.T) {
	h := newHarness(t, abc())
	var a Attempts
	tk, _ := h.m.Next(&a)
	tk.Fail(Failure{Timeout: true}) // slow: counts for a, and for the turn
	if !a.Usable(h.m) {
		t.Fatal("Usable = false with b and c left")
	}
	b, _ := h.m.Next(&a)
	if b.Model() != "b" || h.m.State() != Primary {
		t.Fatalf("Next after a slow primary = %q in %v", b.Model(), h.m.State())
	}
	b.Fail(Failure{Kind: RateLimit}) // in Primary: counts nothing for b
	if s := h.snap(); s.Chain[0].Attempts != 0 || s.ConsecutiveFailures != 1 {
		t.Fatalf("snapshot %+v", s)
	}
	c, _ := h.m.Next(&a)
	if c.Model() != "c" {
		t.Fatalf("Next = %q, want c", c.Model())
	}
	c.Fail(Failure{Kind: Quota})
	if a.Usable(h.m) {
		t.Fatal("Usable = true with every model slow")
	}
	if tk, _ := h.m.Next(&a); tk.Model() != "a" { // nothing left: where Begin goes
		t.Fatalf("Next with every model slow = %q", tk.Model())
	}
	var fresh Attempts
	if !(*Attempts)(nil).Usable(h.m) || !fresh.Usable(h.m) {
		t.Fatal("a new turn: Usable = false")
	}
	if tk, _ := h.m.Next(&fresh); tk.Model() != "a" {
		t.Fatalf("another turn = %q", tk.Model())
	}
}

func TestNextInFallbackSkipsASlowEntry(t *testing.T) {
	h := newHarness(t, abc())
	h.trip()
	var a Attempts
	b, _ := h.m.Next(&a)
	b.Fail(Failure{Kind: RateLimit}) // counts for b (Fallback)
	c, _ := h.m.Next(&a)
	if c.Model() != "c" {
		t.Fatalf("Next = %q, want c", c.Model())
	}
	c.Failure(Transient)
	if s := h.snap(); s.Chain[0].Attempts != 1 || s.Chain[1].Attempts != 1 {
		t.Fatalf("chain %+v", s.Chain)
	}
}

func TestHedge(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a", Chain: []string{"b", "c"}, HedgeAfter: time.Second, HedgeBudget: 0.5})
	var a Attempts
	run, _ := h.m.Next(&a) // feeds 0.5: the bucket stays capped at 10
	for i := range 10 {
		hd, ok := h.m.Hedge(&a, run)
		if !ok || hd.Model() != "b" || hd.IsProbe() {
			t.Fatalf("hedge %d = %q, %v", i, hd.Model(), ok)
		}
		hd.Failure(Transient) // in Primary: counts nothing for b
	}
	if _, ok := h.m.Hedge(&a, run); ok {
		t.Fatal("hedge with an empty bucket")
	}
	for range 2 {
		var u Attempts
		tk, _ := h.m.Next(&u)
		tk.Cancel()
	}
	hb, ok := h.m.Hedge(&a, run)
	if !ok || h.snap().Chain[0].Attempts != 0 {
		t.Fatalf("hedge after two turns fed 1: %v, %+v", ok, h.snap().Chain)
	}
	if hc, ok := h.m.Hedge(&a, hb); ok {
		t.Fatalf("hedge of a hedge = %q with the bucket at 0", hc.Model())
	}
	h2 := newHarness(t, abc())
	if _, ok := h2.m.Hedge(&a, run); ok {
		t.Fatal("hedge with HedgeAfter 0")
	}
}

func TestHedgeInFallbackSkipsRunning(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a", Chain: []string{"b", "c"}, HedgeAfter: time.Second})
	h.trip()
	var a Attempts
	run, _ := h.m.Next(&a)
	hd, ok := h.m.Hedge(&a, run)
	if !ok || hd.Model() != "c" {
		t.Fatalf("hedge of b = %q, %v", hd.Model(), ok)
	}
	hd.Failure(Transient) // counts for c (Fallback)
	run.Cancel()
	if s := h.snap(); s.Chain[1].Attempts != 1 {
		t.Fatalf("chain %+v", s.Chain)
	}
}

func TestTimeSettingsErrors(t *testing.T) {
	for field, s := range map[string]Settings{
		"QuotaCooldown": {Primary: "a", QuotaCooldown: -1},
		"HedgeAfter":    {Primary: "a", HedgeAfter: -time.Second},
		"HedgeBudget":   {Primary: "a", HedgeBudget: -0.5},
	} {
		_, err := New(s)
		var se *SettingsError
		if !errors.Is(err, ErrInvalidSettings) || !errors.As(err, &se) || se.Field != field {
			t.Errorf("%s: New = %v", field, err)
		}
	}
}

func TestAttemptsManyModels(t *testing.T) {
	chain := make([]string, 99)
	for i := range chain {
		chain[i] = "m" + strconv.Itoa(i)
	}
	h := newHarness(t, Settings{Primary: "a", Chain: chain, TripThreshold: 1, MaxFailCount: 1000})
	h.trip()
	var a Attempts
	for i := range chain { // each Next goes past the entries that failed the turn slowly
		if !a.Usable(h.m) {
			t.Fatalf("Usable = false before %s", chain[i])
		}
		tk, err := h.m.Next(&a)
		if err != nil || tk.Model() != chain[i] {
			t.Fatalf("Next = %q, %v; want %s", tk.Model(), err, chain[i])
		}
		tk.Fail(Failure{Kind: RateLimit})
	}
	if a.Usable(h.m) {
		t.Fatal("Usable = true with every model slow")
	}
	if tk, _ := h.m.Next(&a); tk.Model() != "m0" { // where Begin goes
		t.Fatalf("Next with every model slow = %q", tk.Model())
	}
}

func TestNextDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	m, err := New(Settings{Primary: "a", Chain: []string{"b"}, HedgeAfter: time.Second, OnTransition: func(Transition) {}})
	if err != nil {
		t.Fatal(err)
	}
	turns, n := make([]Attempts, 1001), 0 // the caller's: one per turn
	allocs := testing.AllocsPerRun(1000, func() {
		a := &turns[n]
		n++
		tk, _ := m.Next(a)
		tk.Success()
		tk, _ = m.Next(a)
		tk.Cancel()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per turn of two Nexts", allocs)
	}
	var slow Attempts
	slow.markSlow(0, 2)
	allocs = testing.AllocsPerRun(1000, func() {
		tk, _ := m.Next(&slow) // past the slow primary, under the lock
		tk.Cancel()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Next past a slow model", allocs)
	}
}

// TestAttemptsConcurrentHedge runs the two attempts of hedged turns on two
// goroutines sharing one Attempts (run with -race): each turn's memory ends
// with both models recorded as slow.
func TestAttemptsConcurrentHedge(t *testing.T) {
	m, err := New(Settings{Primary: "a", Chain: []string{"b", "c"}, HedgeAfter: time.Millisecond, HedgeBudget: 1,
		TripThreshold: 1 << 20, MaxFailCount: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		var a Attempts
		run, err := m.Next(&a)
		if err != nil {
			t.Fatal(err)
		}
		hd, ok := m.Hedge(&a, run)
		if !ok || hd.Model() != "b" {
			t.Fatalf("Hedge = %q, %v", hd.Model(), ok)
		}
		done := make(chan bool)
		go func() {
			run.Fail(Failure{Timeout: true})
			done <- a.Usable(m)
		}()
		hd.Fail(Failure{Kind: RateLimit})
		_ = a.Usable(m)
		<-done
		if !a.slow(0) || !a.slow(1) || a.slow(2) {
			t.Fatalf("turn memory: primary %v, b %v, c %v", a.slow(0), a.slow(1), a.slow(2))
		}
		if tk, _ := m.Next(&a); tk.Model() != "c" {
			t.Fatalf("Next after both failed slowly = %q", tk.Model())
		}
	}
}

// TestSkipRoutesPastWithoutVerdict: a skipped ticket counts nothing, and the
// rest of its turn goes past its model as past a slow one.
func TestSkipRoutesPastWithoutVerdict(t *testing.T) {
	h := newHarness(t, abc())
	var a Attempts
	tk, _ := h.m.Next(&a)
	tk.Skip()
	if s := h.snap(); s.ConsecutiveFailures != 0 || s.State != Primary {
		t.Fatalf("after Skip: %+v", s)
	}
	if b, _ := h.m.Next(&a); b.Model() != "b" {
		t.Fatalf("Next after a skipped primary = %q, want b", b.Model())
	}
	tk.Skip() // a second settlement does nothing
	var fresh Attempts
	if tk, _ := h.m.Next(&fresh); tk.Model() != "a" {
		t.Fatalf("another turn = %q, want a", tk.Model())
	}
	Ticket{}.Skip() // the zero Turn: nothing
}
