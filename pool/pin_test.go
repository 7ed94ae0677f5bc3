package pool_test

import (
	"errors"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// TestPin: a pinned request goes to its member whatever the choice would
// say; only the member's breaker refuses it, never its headroom.
func TestPin(t *testing.T) {
	f := newFixture(t, equal(2), nil)
	var q pool.Request
	a := f.choose(t, &q, pool.Need{CanServe: only(0)})
	a.Headroom(f.c.Now(), pool.Headroom{Requests: pool.Limit{Remaining: 0, Reset: f.c.Now().Add(time.Minute)}})
	a.Success(f.c.Now())

	var r pool.Request
	p, err := f.p.Pin(f.c.Now(), &r, 0, pool.Need{})
	if err != nil || p.Member() != 0 {
		t.Fatalf("Pin = m%d, %v; want m0 though it has no headroom", p.Member(), err)
	}
	p.Success(f.c.Now())

	f.trip(t, 1)
	var r2 pool.Request
	_, err = f.p.Pin(f.c.Now(), &r2, 1, pool.Need{})
	var oe *breaker.OpenError
	if !errors.As(err, &oe) {
		t.Fatalf("Pin on an open member: %v, want its *breaker.OpenError", err)
	}
	if st := f.p.Status(f.c.Now(), 1); st.InFlight != 0 {
		t.Fatalf("a refused pin left %d in flight", st.InFlight)
	}
	f.c.Advance(30 * time.Second)
	p, err = f.p.Pin(f.c.Now(), &r2, 1, pool.Need{}) // not tried: the refusal counted nothing
	if err != nil || !p.IsProbe() {
		t.Fatalf("Pin after the cooldown = probe %v, %v; want the probe", p.IsProbe(), err)
	}
	p.Success(f.c.Now())
	if s := f.bs[1].State(); s != breaker.Closed {
		t.Fatalf("m1 %v after its pinned probe's success, want closed", s)
	}
}

// TestPeek: Peek names the member a choice would take, and takes nothing.
func TestPeek(t *testing.T) {
	f := newFixture(t, equal(3), nil)
	s := sessionHomedOn(t, f, 2)
	var r pool.Request
	if got := f.p.Peek(f.c.Now(), &r, pool.Need{Session: s}); got != 2 {
		t.Fatalf("Peek = m%d, want the home m2", got)
	}
	for i := range 3 {
		if n := f.p.Status(f.c.Now(), i).InFlight; n != 0 {
			t.Fatalf("Peek took a slot on m%d", i)
		}
	}
	if got := f.p.Peek(f.c.Now(), &r, pool.Need{CanServe: only()}); got != -1 {
		t.Fatalf("Peek with no member admitted = %d, want -1", got)
	}
}
