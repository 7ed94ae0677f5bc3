package breaker

import (
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestProbeRace: after the cooldown, many goroutines race through the gate;
// exactly one becomes the probe and the rest are refused with a probe in flight.
func TestProbeRace(t *testing.T) {
	const rounds, racers = 300, 16
	f := newFixture(t)
	f.trip()
	for round := range rounds {
		f.clock.Advance(testRecovery)
		var probes, refusals atomic.Int32
		var probe Permit
		start := make(chan struct{})
		var wg sync.WaitGroup
		for range racers {
			wg.Go(func() {
				<-start
				p, err := f.b.Allow()
				switch {
				case err != nil:
					if err.(*OpenError).State != HalfOpen {
						t.Errorf("refusal %v, want a probe in flight", err)
					}
					refusals.Add(1)
				case p.IsProbe():
					probes.Add(1)
					probe = p
				default:
					t.Error("a non-probe permit from a half-open breaker")
				}
			})
		}
		close(start)
		wg.Wait()
		if probes.Load() != 1 || refusals.Load() != racers-1 {
			t.Fatalf("round %d: %d probes, %d refusals; want exactly 1 probe", round, probes.Load(), refusals.Load())
		}
		probe.Failure() // re-open for the next round
	}
}

// TestConcurrentStress mixes every operation from many goroutines on a moving
// clock. (Exclusivity of the probe is TestProbeRace's job: here a straggler's
// failure may legitimately re-open the breaker under a held probe.) It checks
// that callbacks arrive as a chain (each change starts where the previous one ended), and that
// nothing races or deadlocks.
// With a rate window (rev 4) it also checks that lock-free window updates and
// slow-call trips race with nothing.
func TestConcurrentStress(t *testing.T) {
	t.Run("consecutive", func(t *testing.T) { stress(t, Settings{}) })
	t.Run("rate window and slow calls", func(t *testing.T) {
		stress(t, Settings{FailureRate: 0.6, RateWindow: 10 * time.Millisecond, RateMinCalls: 4,
			SlowCallAfter: time.Millisecond, SlowCallRate: 0.5})
	})
}

// stress is TestConcurrentStress with the rate settings of s.
func stress(t *testing.T, s Settings) {
	clock := &fakeClock{}
	var mu sync.Mutex
	var chain []string
	last := Closed
	b, err := New(Settings{
		Name: "s", FailureThreshold: 2, RecoveryDuration: 3 * time.Millisecond, ProbeTimeout: time.Hour, Now: clock.Now,
		FailureRate: s.FailureRate, RateWindow: s.RateWindow, RateMinCalls: s.RateMinCalls,
		SlowCallAfter: s.SlowCallAfter, SlowCallRate: s.SlowCallRate,
		OnStateChange: func(_ string, from, to State) {
			mu.Lock()
			defer mu.Unlock()
			if from != last {
				chain = append(chain, "BROKEN:"+from.String()+"!="+last.String())
			}
			chain = append(chain, to.String())
			last = to
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var probes atomic.Int32
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for range 3000 {
				switch r.IntN(6) {
				case 0:
					clock.Advance(time.Millisecond)
				case 1:
					_, _, _ = b.State(), b.WouldAllow(), b.Snapshot()
				default:
					p, err := b.Allow()
					if err != nil {
						continue
					}
					if p.IsProbe() {
						probes.Add(1)
						runtime.Gosched() // hold the probe for a while
					}
					switch r.IntN(4) {
					case 0:
						p.Success()
					case 3:
						p.SuccessAfter(time.Duration(r.IntN(3)) * time.Millisecond)
					case 1:
						p.Failure()
					default:
						p.Cancel()
					}
				}
			}
		})
	}
	wg.Wait()
	if probes.Load() == 0 {
		t.Fatal("the stress test never granted a probe")
	}
	mu.Lock()
	defer mu.Unlock()
	if s := strings.Join(chain, ","); strings.Contains(s, "BROKEN") {
		t.Fatalf("callbacks out of order: %s", s)
	}
	if len(chain) == 0 {
		t.Fatal("the stress test never changed state")
	}
	if st := b.State(); st != last { // the lease (1h) cannot lapse here
		t.Fatalf("final state %v, last callback said %v", st, last)
	}
}
