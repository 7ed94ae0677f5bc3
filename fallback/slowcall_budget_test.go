package fallback

import (
	"sync/atomic"
	"testing"
	"time"
)

// slowSettings is abc with slow calls over 1s at a rate of 50%, at least 4
// calls in the window, and no failure-rate rule.
func slowSettings() Settings {
	s := abc()
	s.SlowCallAfter, s.SlowCallRate, s.RateMinCalls = time.Second, 0.5, 4
	return s
}

// §8.2: after a slow success, slow calls / verdicts ≥ SlowCallRate with at
// least RateMinCalls verdicts trips, as on the threshold.
func TestSlowSuccessesTrip(t *testing.T) {
	h := newHarness(t, slowSettings())
	h.begin("a", false).SuccessAfter(2 * time.Second)
	h.begin("a", false).SuccessAfter(time.Second) // not later than SlowCallAfter: not slow
	h.begin("a", false).SuccessAfter(100 * time.Millisecond)
	h.expectState(Primary) // 1 slow of 3: under RateMinCalls
	h.clk.Advance(time.Second)
	h.begin("a", false).SuccessAfter(3 * time.Second) // 2 slow of 4: 50%
	h.expectEvents(tr(Primary, Fallback, "a", "b", at(time.Second)))
	if s := h.snap(); !s.CooldownEnds.Equal(at(61*time.Second)) || !s.FallbackActivated {
		t.Fatalf("after the slow-call trip: %+v", s)
	}
}

// A slow success is a success for every rule: it zeroes the consecutive
// failures, and it is a probe success when the
// probe's first content is on time (a slow probe re-opens: §9.2,
// slowprobe_test.go).
func TestSlowSuccessIsASuccess(t *testing.T) {
	s := slowSettings()
	s.RateMinCalls = 100
	h := newHarness(t, s)
	h.fail(2, Transient, "a")
	h.begin("a", false).SuccessAfter(time.Minute)
	if n := h.snap().ConsecutiveFailures; n != 0 {
		t.Fatalf("ConsecutiveFailures = %d after a slow success", n)
	}
	h.trip()
	h.clk.Advance(time.Minute)
	h.begin("a", true).SuccessAfter(time.Second)
	h.begin("a", true).SuccessAfter(time.Second)
	h.expectState(Primary)
}

// Slow calls need both settings; a chain entry's slow success counts nothing.
func TestSlowCallsNeedBothSettings(t *testing.T) {
	for _, s := range []Settings{
		{Primary: "a", SlowCallAfter: time.Second, RateMinCalls: 1},
		{Primary: "a", SlowCallRate: 0.1, RateMinCalls: 1},
	} {
		h := newHarness(t, s)
		for range 5 {
			h.begin("a", false).SuccessAfter(time.Hour)
		}
		h.expectState(Primary)
		if h.m.win.Load() != nil {
			t.Fatalf("%+v: a window with no rule on", s)
		}
	}
	s := slowSettings()
	s.RateMinCalls = 1
	h := newHarness(t, s)
	var a Attempts
	tk, _ := h.m.Next(&a)
	tk.Fail(Failure{Timeout: true}) // 1 failure, 0 slow of 1
	tk, _ = h.m.Next(&a)
	tk.SuccessAfter(time.Hour) // b serving a turn in Primary: not counted
	if c := h.m.win.Load().Counts(int64(h.clk.Now().Sub(t0))); c.Verdicts != 1 || c.Slow != 0 {
		t.Fatalf("window %+v", c)
	}
}

// §8.3: a budget per model that starts full, a same-model retry spends one
// token, with less than one no retry; each turn that reaches a model adds
// RetryBudget, capped at RetryBudgetBurst; the first attempt never spends.
func TestRetryBudget(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a", Chain: []string{"b"}, RetryBudget: 0.5, RetryBudgetBurst: 2})
	tk := h.begin("a", false) // feeds a full bucket: nothing
	if !tk.Retry() || !tk.Retry() || tk.Retry() {
		t.Fatal("a full budget of 2 allowed other than 2 retries")
	}
	tk.Failure(Transient)
	h.begin("a", false).Success()
	if h.m.Retry("a") {
		t.Fatal("0.5 tokens allowed a retry")
	}
	h.begin("a", false).Success()
	if !h.m.Retry("a") || h.m.Retry("a") {
		t.Fatal("two turns at 0.5 fed other than one retry")
	}
	for range 10 {
		h.begin("a", false).Success()
	}
	if got := spendAll(h.m, "a"); got != 2 {
		t.Fatalf("10 turns refilled %d retries, want the burst, 2", got)
	}
	if got := spendAll(h.m, "b"); got != 2 { // every model has its own
		t.Fatalf("b's budget allowed %d retries", got)
	}
	if !h.m.Retry("unknown") || (Ticket{}).Retry() {
		t.Fatal("an unknown model has no budget; the zero Turn may not retry")
	}
}

// A turn feeds each model it reaches once, however many attempts it makes.
func TestRetryBudgetFedOncePerTurn(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a", Chain: []string{"b"}, RetryBudget: 1, RetryBudgetBurst: 3})
	spendAll(h.m, "a")
	var a Attempts
	for range 3 { // three attempts of one turn on the primary (fast failures)
		tk, _ := h.m.Next(&a)
		tk.Cancel()
	}
	if got := spendAll(h.m, "a"); got != 1 {
		t.Fatalf("one turn of 3 attempts fed %d retries, want 1", got)
	}
}

// Negative RetryBudget: off, every retry allowed. Hedges keep their own
// budget: a hedge spends no retry token.
func TestRetryBudgetOffAndHedges(t *testing.T) {
	h := newHarness(t, Settings{Primary: "a", RetryBudget: -1})
	if spendAll(h.m, "a") <= 1000 {
		t.Fatal("the budget is off, yet it refused a retry")
	}
	h = newHarness(t, Settings{Primary: "a", Chain: []string{"b"}, HedgeAfter: time.Second, RetryBudgetBurst: 1})
	var a Attempts
	run, _ := h.m.Next(&a)
	hedge, ok := h.m.Hedge(&a, run)
	if !ok || hedge.Model() != "b" {
		t.Fatal("no hedge")
	}
	if !h.m.Retry("b") {
		t.Fatal("the hedge spent b's retry token")
	}
}

// §8.4: Begin and a success in Primary with no rate window read no clock;
// with one, a verdict reads it once.
func TestPrimaryPathReadsNoClock(t *testing.T) {
	for _, c := range []struct {
		rate  float64
		reads int64
	}{{0, 0}, {0.5, 2}} {
		var reads atomic.Int64
		m, err := New(Settings{Primary: "a", Chain: []string{"b"}, FailureRate: c.rate,
			Now: func() time.Time { reads.Add(1); return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		reads.Store(0)
		for range 2 {
			tk, _ := m.Begin()
			tk.Success()
		}
		if got := reads.Load(); got != c.reads {
			t.Errorf("FailureRate %v: 2 × Begin + Success read the clock %d times, want %d", c.rate, got, c.reads)
		}
	}
}

// §8.4: a timeout is dated at now − its reported duration; with none, when
// it is reported.
func TestTimeoutDatedByElapsed(t *testing.T) {
	for _, c := range []struct {
		elapsed time.Duration
		want    time.Time
	}{{90 * time.Second, at(30 * time.Second)}, {0, at(2 * time.Minute)}} {
		h := newHarness(t, Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1})
		tk := h.begin("a", false)
		h.clk.Advance(2 * time.Minute)
		tk.Fail(Failure{Timeout: true, Elapsed: c.elapsed})
		if s := h.snap(); !s.TrippedAt.Equal(c.want) {
			t.Errorf("Elapsed %v: tripped at %v, want %v", c.elapsed, s.TrippedAt, c.want)
		}
	}
}

// The window counts every success of concurrent turns exactly once (the
// lock-free ones and those under the lock alike), and every failure at most
// once (a failure older than a counted success is stale: it counts nothing).
func TestWindowCountsConcurrentVerdicts(t *testing.T) {
	const goroutines, turns = 6, 300
	m, err := New(Settings{Primary: "a", Chain: []string{"b"}, FailureRate: 1, RateMinCalls: 1 << 30,
		TripThreshold: 1 << 30, RateWindow: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var fails atomic.Int64
	done := make(chan struct{})
	for g := range goroutines {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range turns {
				tk, _ := m.Begin()
				if (i+g)%5 == 0 {
					tk.Failure(Transient)
					fails.Add(1)
				} else {
					tk.SuccessAfter(time.Millisecond)
				}
				tk.Success() // a second settlement: ignored
			}
		}()
	}
	for range goroutines {
		<-done
	}
	clk := m.clock()
	c := m.win.Load().Counts(int64(clk.sinceEpoch()))
	if ok := goroutines*turns - fails.Load(); c.Verdicts-c.Failures != ok || c.Failures > fails.Load() || c.Failures == 0 {
		t.Fatalf("window %+v; want %d successes, at most %d failures", c, ok, fails.Load())
	}
}
