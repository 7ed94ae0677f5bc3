package pool_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// TestConcurrentProbe: many requests at once find m0's probe due; exactly
// one takes it, and every other, whose gate call on m0 may be refused after
// the pure read admitted it, is served by m1 instead, with no failure
// counted on m0.
func TestConcurrentProbe(t *testing.T) {
	for range 20 {
		f := newFixture(t, equal(2), nil)
		f.trip(t, 0)
		f.c.Advance(30 * time.Second)
		const n = 32
		var wg sync.WaitGroup
		got := make([]pool.Attempt, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				var r pool.Request
				got[i], errs[i] = f.p.Choose(f.c.Now(), &r, pool.Need{})
			})
		}
		wg.Wait()
		probes := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("request %d: %v", i, errs[i])
			}
			if got[i].Member() == 0 {
				probes++
				if !got[i].IsProbe() {
					t.Fatalf("m0 served a request that is not its probe")
				}
			}
		}
		if probes != 1 {
			t.Fatalf("%d requests on m0, want its one probe", probes)
		}
		if s := f.bs[0].Snapshot(); s.ConsecutiveFailures != 3 || s.State != breaker.HalfOpen {
			t.Fatalf("m0 = %+v, want half-open with its 3 failures", s)
		}
		if st := f.p.Status(f.c.Now(), 1); st.InFlight != n-1 {
			t.Fatalf("m1 in flight %d, want %d", st.InFlight, n-1)
		}
	}
}

// TestConcurrentInFlight: requests from many goroutines, hedged or not,
// settled with every verdict, leave every in-flight count at zero.
func TestConcurrentInFlight(t *testing.T) {
	f := newFixture(t, []float64{1, 2, 3}, func(s *pool.Settings, bs []breaker.Settings) {
		for i := range bs {
			bs[i].RecoveryDuration = time.Millisecond
		}
	})
	verdicts := []string{"ok", "ok", "ok", "fail", "timeout", "rate", "quota", "none", "cancel"}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			src := rand.New(rand.NewPCG(uint64(g), 1))
			for k := range 300 {
				var r pool.Request
				n := pool.Need{Session: pool.SessionOf(string(rune('a' + k%5))), Stream: k%2 == 0}
				a, err := f.p.Choose(f.c.Now(), &r, n)
				if err != nil {
					continue
				}
				if k%3 == 0 {
					if h, err := f.p.Hedge(f.c.Now(), &r, n); err == nil {
						h.FirstContent(f.c.Now())
						a.Lose(f.c.Now(), 0)
						a = h
					}
				}
				settleAs(a, f.c.Advance(time.Duration(src.IntN(3))*time.Millisecond), verdicts[src.IntN(len(verdicts))], time.Millisecond)
				f.p.End(f.c.Now(), &r)
			}
		})
	}
	wg.Wait()
	for i := range f.bs {
		if st := f.p.Status(f.c.Now(), i); st.InFlight != 0 {
			t.Fatalf("m%d in flight %d after every outcome", i, st.InFlight)
		}
	}
}

// TestRefusedAfterAdmitted: when a member's gate refuses after the pure read
// admitted it (another request took its probe in between), the choice is
// made again without it; the member is not marked tried and nothing is
// counted against it. The member breaker's clock holds request A inside its
// gate call while request B takes the probe.
func TestRefusedAfterAdmitted(t *testing.T) {
	c := &clock{t: t0}
	var (
		mu      sync.Mutex
		calls   int
		armed   bool
		blocked = make(chan struct{})
		resume  = make(chan struct{})
	)
	hook := func() time.Time {
		mu.Lock()
		calls++
		hold := armed && calls == 2 // A's WouldAllow is call 1, its Allow call 2
		mu.Unlock()
		if hold {
			close(blocked)
			<-resume
		}
		return c.Now()
	}
	f := newFixture(t, equal(2), func(_ *pool.Settings, bs []breaker.Settings) { bs[0].Now = hook })
	f.c = c
	f.trip(t, 0)
	c.Advance(30 * time.Second)
	mu.Lock()
	armed, calls = true, 0
	mu.Unlock()

	var ra pool.Request
	done := make(chan pool.Attempt)
	go func() {
		a, err := f.p.Choose(c.Now(), &ra, pool.Need{})
		if err != nil {
			t.Error(err)
		}
		done <- a
	}()
	<-blocked
	var rb pool.Request
	b := f.choose(t, &rb, pool.Need{})
	if b.Member() != 0 || !b.IsProbe() {
		t.Fatalf("B: m%d probe %v, want m0's probe", b.Member(), b.IsProbe())
	}
	close(resume)
	a := <-done
	if a.Member() != 1 {
		t.Fatalf("A: m%d, want m1 after m0's gate refused", a.Member())
	}
	if s := f.bs[0].Snapshot(); s.ConsecutiveFailures != 3 {
		t.Fatalf("m0 failures = %d, want 3 (the refusal is no failure)", s.ConsecutiveFailures)
	}
	if st := f.p.Status(c.Now(), 0); st.InFlight != 1 {
		t.Fatalf("m0 in flight %d, want B's probe only", st.InFlight)
	}
	b.Cancel(c.Now()) // m0's probe slot is free again: A may be served by m0 now
	a.Failure(c.Now())
	if a2 := f.choose(t, &ra, pool.Need{}); a2.Member() != 0 {
		t.Fatalf("A's next choice: m%d, want m0, which A never tried", a2.Member())
	}
}

// TestConcurrentLeases: attempts left unsettled lapse at their lease while
// other goroutines choose and settle; once every lease has ended and the pool
// is touched, nothing is left in flight.
func TestConcurrentLeases(t *testing.T) {
	f := newFixture(t, equal(3), func(s *pool.Settings, bs []breaker.Settings) {
		s.AttemptTimeout = 2 * time.Millisecond
		for i := range bs {
			bs[i].RecoveryDuration = time.Millisecond
			bs[i].ProbeTimeout = 3 * time.Millisecond
		}
	})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			src := rand.New(rand.NewPCG(uint64(g), 9))
			for range 400 {
				var r pool.Request
				a, err := f.p.Choose(f.c.Now(), &r, pool.Need{})
				f.c.Advance(time.Duration(src.IntN(1500)) * time.Microsecond)
				if err != nil || src.IntN(3) == 0 {
					continue // left to its lease
				}
				settleAs(a, f.c.Now(), []string{"ok", "fail", "cancel"}[src.IntN(3)], time.Millisecond)
			}
		})
	}
	wg.Wait()
	f.c.Advance(time.Second)
	for range 400 { // touches: each releases up to 8 lapsed attempts
		f.p.Choose(f.c.Now(), &pool.Request{}, pool.Need{CanServe: only()})
	}
	for i := range f.bs {
		if st := f.p.Status(f.c.Now(), i); st.InFlight != 0 {
			t.Fatalf("m%d in flight %d after every lease ended", i, st.InFlight)
		}
	}
}
