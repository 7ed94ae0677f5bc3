package pool_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// t0 is the tests' start of time.
var t0 = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// clock is a manual clock shared by a pool's caller and its members'
// breakers.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// fixture is a pool of members named m0, m1, … on one manual clock.
type fixture struct {
	p  *pool.Pool
	bs []*breaker.Breaker
	c  *clock
}

// seq returns a Rand that cycles through vals (deterministic draws).
func seq(vals ...uint64) func() uint64 {
	var mu sync.Mutex
	i := 0
	return func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		v := vals[i%len(vals)]
		i++
		return v
	}
}

// newFixture builds a pool with the given weights; edit adjusts its settings
// (nil: none). Member breakers trip at 3 and cool down for 30 s.
func newFixture(tb testing.TB, weights []float64, edit func(*pool.Settings, []breaker.Settings)) *fixture {
	tb.Helper()
	c := &clock{t: t0}
	bset := make([]breaker.Settings, len(weights))
	for i := range weights {
		bset[i] = breaker.Settings{Name: fmt.Sprintf("m%d", i), Now: c.Now}
	}
	s := pool.Settings{Name: "p"}
	if edit != nil {
		edit(&s, bset)
	}
	f := &fixture{c: c}
	for i, w := range weights {
		b, err := breaker.New(bset[i])
		if err != nil {
			tb.Fatal(err)
		}
		f.bs = append(f.bs, b)
		s.Members = append(s.Members, pool.Member{Name: bset[i].Name, Weight: w, Breaker: b})
	}
	p, err := pool.New(s)
	if err != nil {
		tb.Fatal(err)
	}
	f.p = p
	return f
}

// equal returns n weights of 1.
func equal(n int) []float64 {
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	return w
}

// trip opens member i's breaker by failing it three times.
func (f *fixture) trip(tb testing.TB, i int) {
	tb.Helper()
	for range 3 {
		pm, err := f.bs[i].Allow()
		if err != nil {
			tb.Fatalf("trip m%d: %v", i, err)
		}
		pm.Failure()
	}
}

// choose chooses for r at the fixture's now and fails the test on an error.
func (f *fixture) choose(tb testing.TB, r *pool.Request, n pool.Need) pool.Attempt {
	tb.Helper()
	a, err := f.p.Choose(f.c.Now(), r, n)
	if err != nil {
		tb.Fatalf("Choose: %v", err)
	}
	return a
}
