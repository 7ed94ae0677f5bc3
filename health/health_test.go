package health

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fakeClock is a manual clock safe for concurrent use.
type fakeClock struct{ off atomic.Int64 }

func (c *fakeClock) Now() time.Time          { return t0.Add(time.Duration(c.off.Load())) }
func (c *fakeClock) Advance(d time.Duration) { c.off.Add(int64(d)) }

// fixture is a registry on a fake clock that records state changes.
type fixture struct {
	clock  *fakeClock
	r      *Registry
	mu     sync.Mutex
	events []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{clock: &fakeClock{}}
	r, err := NewRegistry(breaker.Settings{
		Name:             "ignored",
		FailureThreshold: 2,
		RecoveryDuration: 30 * time.Second,
		ProbeTimeout:     10 * time.Second,
		Now:              f.clock.Now,
		OnStateChange: func(name string, from, to breaker.State) {
			f.mu.Lock()
			f.events = append(f.events, fmt.Sprintf("%s:%v->%v", name, from, to))
			f.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.r = r
	return f
}

// call makes one call to tool lasting d, settled with err; it fails t if refused.
func (f *fixture) call(t *testing.T, tool string, d time.Duration, err error) Permit {
	t.Helper()
	p, gerr := f.r.Allow(tool)
	if gerr != nil {
		t.Fatalf("Allow(%q) refused: %v", tool, gerr)
	}
	f.clock.Advance(d)
	p.Done(err)
	return p
}

// create makes the registry know tools, through the gate (the only way).
func create(r *Registry, tools ...string) {
	for _, tool := range tools {
		p, _ := r.Allow(tool)
		p.Cancel()
	}
}

// trip opens tool's breaker.
func (f *fixture) trip(t *testing.T, tool string) {
	t.Helper()
	f.call(t, tool, 0, errors.New("down"))
	f.call(t, tool, 0, errors.New("down"))
	if st := f.r.Breaker(tool).State(); st != breaker.Open {
		t.Fatalf("%s: state %v after 2 failures", tool, st)
	}
}

var errDown = errors.New("down")

// near compares floats computed in different orders.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// TestSection2 has one case per rule of docs/SEMANTICS.md section 2.
func TestSection2(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, f *fixture)
	}{
		{"stats/calls, successes, failures, total and max duration (failed calls count)", func(t *testing.T, f *fixture) {
			f.call(t, "a", 2*time.Second, nil)
			f.call(t, "a", 5*time.Second, errDown)
			f.call(t, "a", time.Second, nil)
			got := f.r.Stats("a")
			want := Stats{Calls: 3, Successes: 2, Failures: 1, TotalDuration: 8 * time.Second, MaxDuration: 5 * time.Second,
				EWMA: 0.7*(0.7*(0.7*1+0.3)+0) + 0.3}
			if !near(got.EWMA, want.EWMA) {
				t.Fatalf("EWMA %v, want %v", got.EWMA, want.EWMA)
			}
			got.EWMA = want.EWMA
			if got != want {
				t.Fatalf("stats %+v, want %+v", got, want)
			}
		}},
		{"stats/total duration saturates", func(t *testing.T, f *fixture) {
			var s Stats
			s.record(true, math.MaxInt64-time.Second)
			s.record(false, 2*time.Second)
			s.record(true, -time.Second) // a clock going backwards counts as 0
			if s.TotalDuration != math.MaxInt64 || s.MaxDuration != math.MaxInt64-time.Second || s.Calls != 3 {
				t.Fatalf("stats %+v", s)
			}
		}},
		{"EWMA/starts at 1.0, next = 0.7 prev + 0.3 sample", func(t *testing.T, f *fixture) {
			if e := f.r.Stats("a").EWMA; e != 1 {
				t.Fatalf("initial EWMA %v", e)
			}
			f.call(t, "a", 0, errDown)
			if e := f.r.Stats("a").EWMA; e != 0.7 {
				t.Fatalf("EWMA after a failure %v, want 0.7", e)
			}
			f.call(t, "a", 0, nil)
			if e := f.r.Stats("a").EWMA; !near(e, 0.7*0.7+0.3) {
				t.Fatalf("EWMA after a success %v, want 0.79", e)
			}
		}},
		{"score/0.3 success rate + 0.7 EWMA, success rate 1.0 with no calls", func(t *testing.T, f *fixture) {
			if s := (Stats{EWMA: 1}); s.SuccessRate() != 1 || s.Score() != 1 {
				t.Fatalf("fresh: rate %v score %v", s.SuccessRate(), s.Score())
			}
			s := Stats{Calls: 4, Successes: 1, Failures: 3, EWMA: 0.5}
			if s.SuccessRate() != 0.25 || math.Abs(s.Score()-(0.3*0.25+0.7*0.5)) > 1e-15 {
				t.Fatalf("rate %v score %v", s.SuccessRate(), s.Score())
			}
		}},
		{"status/Unhealthy if the breaker is open", func(t *testing.T, f *fixture) {
			for range 10 {
				f.call(t, "a", 0, nil)
			}
			f.trip(t, "a")
			f.clock.Advance(time.Hour) // a probe is due; State is still Open
			if st := f.r.Status("a"); st != Unhealthy {
				t.Fatalf("status %v", st)
			}
		}},
		{"status/else by score: Healthy >= 0.8, Degraded >= 0.5, else Unhealthy", func(t *testing.T, f *fixture) {
			for _, tc := range []struct {
				s    Stats
				want Status
			}{
				{Stats{EWMA: 1}, Healthy},
				{Stats{Calls: 10, Successes: 10, EWMA: 0.72}, Healthy},  // 0.804
				{Stats{Calls: 10, Successes: 10, EWMA: 0.71}, Degraded}, // 0.797
				{Stats{Calls: 2, Successes: 1, Failures: 1, EWMA: 0.7}, Degraded},
				{Stats{Calls: 1, Failures: 1, EWMA: 0.7}, Unhealthy},   // 0.49
				{Stats{Calls: 1, Successes: 1, EWMA: 0.28}, Unhealthy}, // 0.496
			} {
				if got := statusOf(breaker.Closed, tc.s); got != tc.want {
					t.Errorf("status of %+v (score %v) = %v, want %v", tc.s, tc.s.Score(), got, tc.want)
				}
				if got := statusOf(breaker.HalfOpen, tc.s); got != tc.want {
					t.Errorf("half-open: status of %+v = %v, want %v", tc.s, got, tc.want)
				}
			}
			f.call(t, "a", 0, nil)
			f.call(t, "a", 0, errDown)
			if st := f.r.Status("a"); st != Degraded {
				t.Fatalf("one success then one failure: %v, want degraded", st)
			}
		}},
		{"settling a permit updates both the breaker and the stats", func(t *testing.T, f *fixture) {
			f.call(t, "a", time.Second, errDown)
			if s := f.r.Breaker("a").Snapshot(); s.ConsecutiveFailures != 1 || f.r.Stats("a").Failures != 1 {
				t.Fatalf("breaker %+v stats %+v", s, f.r.Stats("a"))
			}
		}},
		{"a refusal touches neither the breaker nor the stats", func(t *testing.T, f *fixture) {
			f.trip(t, "a")
			bs, ss := f.r.Breaker("a").Snapshot(), f.r.Stats("a")
			p, err := f.r.Allow("a")
			var oe *breaker.OpenError
			if !errors.As(err, &oe) || oe.Name != "a" || p != (Permit{}) {
				t.Fatalf("refusal %v, permit %+v", err, p)
			}
			p.Failure() // the zero permit does nothing
			if f.r.Breaker("a").Snapshot() != bs || f.r.Stats("a") != ss {
				t.Fatal("a refusal changed something")
			}
		}},
		{"a cancel records nothing and frees the probe slot", func(t *testing.T, f *fixture) {
			f.trip(t, "a")
			f.clock.Advance(30 * time.Second)
			ss := f.r.Stats("a")
			p := f.call(t, "a", time.Second, context.Canceled)
			if !p.IsProbe() || f.r.Stats("a") != ss {
				t.Fatalf("probe=%v stats %+v, want %+v", p.IsProbe(), f.r.Stats("a"), ss)
			}
			if p := f.call(t, "a", 0, nil); !p.IsProbe() {
				t.Fatal("slot not freed")
			}
			if st := f.r.Breaker("a").State(); st != breaker.Closed {
				t.Fatalf("state %v after the probe's success", st)
			}
		}},
		{"gate and oracle are keyed by tool and obey section 1", func(t *testing.T, f *fixture) {
			f.trip(t, "a")
			if f.r.WouldAllow("a") || !f.r.WouldAllow("b") {
				t.Fatal("WouldAllow mixes tools")
			}
			f.call(t, "b", 0, nil)
			f.clock.Advance(30 * time.Second)
			if !f.r.WouldAllow("a") {
				t.Fatal("no probe after the cooldown")
			}
			f.call(t, "a", 0, nil)
			f.mu.Lock()
			defer f.mu.Unlock()
			if got := strings.Join(f.events, ","); got != "a:closed->open,a:open->half-open,a:half-open->closed" {
				t.Fatalf("events %s (OnStateChange must get the tool's name)", got)
			}
		}},
		{"pure reads of an unknown tool create nothing", func(t *testing.T, f *fixture) {
			if !f.r.WouldAllow("x") || f.r.Stats("x") != (Stats{EWMA: 1}) || f.r.Status("x") != Healthy {
				t.Fatal("unknown tool does not read as fresh")
			}
			rt := NewRouter(f.r, map[string][]string{"x": {"y"}})
			if got, err := rt.Resolve("x"); got != "x" || err != nil {
				t.Fatalf("Resolve = %q, %v", got, err)
			}
			if s := f.r.Summary(); len(s) != 0 {
				t.Fatalf("pure reads created %v", s)
			}
		}},
		{"summary is sorted by tool name", func(t *testing.T, f *fixture) {
			for _, tool := range []string{"m", "c", "z", "a"} {
				f.call(t, tool, 0, nil)
			}
			f.trip(t, "c")
			var names []string
			for _, h := range f.r.Summary() {
				names = append(names, h.Tool)
				if h.Tool == "c" && (h.State != breaker.Open || h.Status != Unhealthy || h.Stats.Failures != 2) {
					t.Fatalf("summary line %+v", h)
				}
			}
			if got := strings.Join(names, ","); got != "a,c,m,z" {
				t.Fatalf("summary order %s", got)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, newFixture(t)) })
	}
}

func TestNewRegistryRejectsBadSettings(t *testing.T) {
	_, err := NewRegistry(breaker.Settings{ProbeTimeout: -time.Second})
	if err == nil || err.Error() != "breaker: ProbeTimeout must not be negative (got -1s)" || !errors.Is(err, breaker.ErrInvalidSettings) {
		t.Fatalf("error %v", err)
	}
}

func TestStatusString(t *testing.T) {
	for s, want := range map[Status]string{Healthy: "healthy", Degraded: "degraded", Unhealthy: "unhealthy", Status(9): "Status(9)"} {
		if s.String() != want {
			t.Errorf("%d: %q", int(s), s.String())
		}
	}
}

func TestZeroPermit(t *testing.T) {
	var p Permit
	p.Success()
	p.Failure()
	p.Cancel()
	p.Done(errDown)
	if p.IsProbe() || p.Tool() != "" {
		t.Fatal("zero permit")
	}
}
