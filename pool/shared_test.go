package pool_test

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// TestSharedFigures: two pools that list one deployment and share a
// *Figures see its in-flight count and headroom as one (they are the
// deployment's, whichever pool sent the request), while their other members
// stay apart.
func TestSharedFigures(t *testing.T) {
	c := &clock{t: t0}
	br := func(name string) *breaker.Breaker {
		b, err := breaker.New(breaker.Settings{Name: name, Now: c.Now})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	shared := br("a/m")
	figs := new(pool.Figures)
	p1, err := pool.New(pool.Settings{Name: "one", Figures: figs, Members: []pool.Member{
		{Name: "a/m", Weight: 1, Breaker: shared}, {Name: "b/m", Weight: 1, Breaker: br("b/m")}}})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := pool.New(pool.Settings{Name: "two", Figures: figs, Members: []pool.Member{
		{Name: "c/m", Weight: 1, Breaker: br("c/m")}, {Name: "a/m", Weight: 2, Breaker: shared}}})
	if err != nil {
		t.Fatal(err)
	}
	var r pool.Request
	a, err := p1.Choose(c.Now(), &r, pool.Need{CanServe: only(0)})
	if err != nil {
		t.Fatal(err)
	}
	if st := p2.Status(c.Now(), 1); st.InFlight != 1 || st.Weight != 2 {
		t.Fatalf("p2 sees a/m with %d in flight (weight %v), want 1 (and its own weight 2)", st.InFlight, st.Weight)
	}
	a.Headroom(c.Now(), pool.Headroom{Requests: pool.Limit{Remaining: 0, Reset: c.Now().Add(time.Minute)}})
	a.Success(c.Now())
	if p2.Admits(c.Now(), &pool.Request{}, pool.Need{CanServe: only(1)}) {
		t.Fatal("p2 admits a/m, whose headroom p1's answer spent")
	}
	if st := p2.Status(c.Now(), 0); st.InFlight != 0 || st.Name != "c/m" {
		t.Fatalf("c/m: %+v", st)
	}
}

// TestLastMinute: Status counts each member's attempts over the last
// minute, and its share of the pool's.
func TestLastMinute(t *testing.T) {
	f := newFixture(t, equal(2), nil)
	f.inFlight(t, 0, 3)
	f.c.Advance(30 * time.Second)
	f.inFlight(t, 1, 1)
	if st := f.p.Status(f.c.Now(), 0); st.LastMinute != 3 || st.Share != 0.75 {
		t.Fatalf("m0: %d in the last minute, share %v; want 3 and 0.75", st.LastMinute, st.Share)
	}
	f.c.Advance(40 * time.Second) // m0's attempts are 70 s old now
	if st := f.p.Status(f.c.Now(), 1); st.LastMinute != 1 || st.Share != 1 {
		t.Fatalf("m1: %d in the last minute, share %v; want 1 and 1", st.LastMinute, st.Share)
	}
}
