package pool_test

import (
	"errors"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// drawn returns a Rand value whose two 32-bit draws land on the given shares
// of the admitted weight: first in [0, 1) of Σw, second of Σw less the first
// member's weight.
func drawn(first, second float64) uint64 {
	return uint64(first*(1<<32))<<32 | uint64(second*(1<<32))
}

// sessionHomedOn returns a session whose home among every member of f is i.
func sessionHomedOn(tb testing.TB, f *fixture, i int) pool.Session {
	tb.Helper()
	for k := range 10000 {
		s := pool.SessionOf("session-" + string(rune('a'+k%26)) + time.Duration(k).String())
		if f.p.Home(s) == i {
			return s
		}
	}
	tb.Fatalf("no session homed on m%d", i)
	return pool.Session{}
}

// inFlight starts n attempts on member i that stay in flight (the choice
// is forced by CanServe).
func (f *fixture) inFlight(tb testing.TB, i, n int) {
	tb.Helper()
	for range n {
		var r pool.Request
		f.choose(tb, &r, pool.Need{CanServe: only(i)})
	}
}

// only returns a CanServe that accepts the members listed.
func only(members ...int) func(int) bool {
	return func(i int) bool {
		for _, m := range members {
			if m == i {
				return true
			}
		}
		return false
	}
}

// sample gives member i one success whose first content took d, at the
// fixture's now.
func (f *fixture) sample(tb testing.TB, i int, d time.Duration, stream bool) {
	tb.Helper()
	var r pool.Request
	a := f.choose(tb, &r, pool.Need{CanServe: only(i), Stream: stream})
	a.Success(f.c.Advance(d))
}

// TestChoiceTable has one case per rule of the choice (docs/SEMANTICS.md
// §9.3 rules 2 and 3), named after the rule; want is the member chosen, −1
// for "the pool is unavailable".
func TestChoiceTable(t *testing.T) {
	type row struct {
		name    string
		weights []float64
		rand    []uint64
		setup   func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need)
		want    int
	}
	rows := []row{
		{name: "one admitted member: it", weights: equal(3),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) { n.CanServe = only(2) },
			want:  2},
		{name: "no member admitted: unavailable", weights: equal(2),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) { n.CanServe = only() },
			want:  -1},
		{name: "an open member whose cooldown runs is not admitted", weights: equal(2),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) { f.trip(t, 0) },
			want:  1},
		{name: "a half-open member with its probe in flight is not admitted", weights: equal(2),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				f.trip(t, 0)
				f.c.Advance(30 * time.Second)
				if pm, err := f.bs[0].Allow(); err != nil || !pm.IsProbe() {
					t.Fatalf("probe: %v", err)
				}
			},
			want: 1},
		{name: "a member tried in this request is not admitted again", weights: equal(2),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				a := f.choose(t, r, pool.Need{CanServe: only(0)})
				a.Failure(f.c.Now())
			},
			want: 1},
		{name: "a member the predicate rejects is not admitted", weights: equal(3),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) { n.CanServe = only(0, 2); f.trip(t, 0) },
			want:  2},
		{name: "a member with no request headroom is not admitted", weights: equal(2),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				var q pool.Request
				a := f.choose(t, &q, pool.Need{CanServe: only(0)})
				a.Headroom(f.c.Now(), pool.Headroom{Requests: pool.Limit{Remaining: 0, Reset: f.c.Now().Add(time.Minute)}})
				a.Success(f.c.Now())
			},
			want: 1},
		{name: "(a) a due probe is chosen first, before a cheaper member and the home", weights: equal(3),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				f.trip(t, 1)
				f.c.Advance(30 * time.Second)
				f.sample(t, 0, time.Millisecond, false)
				n.Session = sessionHomedOn(t, f, 2)
			},
			want: 1},
		{name: "(a) after a member's probe failed, a due probe is not admitted for the request", weights: equal(3),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				f.trip(t, 0)
				f.trip(t, 1)
				f.c.Advance(30 * time.Second)
				a := f.choose(t, r, pool.Need{})
				if !a.IsProbe() || a.Member() != 0 {
					t.Fatalf("first choice: member %d probe %v, want m0's probe", a.Member(), a.IsProbe())
				}
				a.Failure(f.c.Now())
			},
			want: 2},
		{name: "(a) one member probe per pool attempt: a cancelled probe leaves no second one", weights: equal(3),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				f.trip(t, 0)
				f.trip(t, 1)
				f.c.Advance(30 * time.Second)
				f.choose(t, r, pool.Need{}).NoVerdict(f.c.Now())
			},
			want: 2},
		{name: "(b) the home serves within its bounds", weights: equal(3), rand: []uint64{drawn(0, 0)},
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				n.Session = sessionHomedOn(t, f, 2)
				f.inFlight(t, 2, 1) // ⌈1.25 × 2 × 1/3⌉ = 1: a home with one in flight at light load serves
			},
			want: 2},
		{name: "(b) the home over its bounded load: the others by cost", weights: equal(3), rand: []uint64{drawn(0, 0)},
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				n.Session = sessionHomedOn(t, f, 2)
				f.inFlight(t, 0, 4)
				f.inFlight(t, 1, 4)
				f.inFlight(t, 2, 9) // F = 17: bound ⌈1.25 × 18 / 3⌉ = 8 < 9; cost 10 ≤ 2 × 5 (within slack)
			},
			want: 0},
		{name: "(b) the home costlier than slack × the lowest: the others", weights: equal(3), rand: []uint64{drawn(0.5, 0)},
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				n.Session = sessionHomedOn(t, f, 0)
				f.sample(t, 0, 300*time.Millisecond, false)
				f.sample(t, 1, 100*time.Millisecond, false)
				f.sample(t, 2, 140*time.Millisecond, false)
			},
			want: 1},
		{name: "(b) the home within slack × the lowest still serves", weights: equal(3),
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				n.Session = sessionHomedOn(t, f, 0)
				f.sample(t, 0, 190*time.Millisecond, false)
				f.sample(t, 1, 100*time.Millisecond, false)
			},
			want: 0},
		{name: "(b) a session whose home is not admitted: home among the admitted", weights: equal(3), rand: []uint64{drawn(0.9, 0.9)},
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				n.Session = sessionHomedOn(t, f, 1)
				f.trip(t, 1)
			},
			want: -2}, // the home of the session among m0 and m2, checked below
		{name: "(c) the lower cost of the two drawn serves", weights: equal(3), rand: []uint64{drawn(0, 0.99)},
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				f.inFlight(t, 0, 2) // first drawn m0, second m2 (of m1, m2)
			},
			want: 2},
		{name: "(c) a tie goes to the first drawn", weights: equal(3), rand: []uint64{drawn(0.5, 0.99)},
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {},
			want:  1},
		{name: "(c) the weight divides the cost", weights: []float64{1, 3}, rand: []uint64{drawn(0, 0)},
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				f.inFlight(t, 1, 2) // m1: 3/3 = 1 against m0: 1/1 = 1: a tie, the first drawn (m0)
				f.inFlight(t, 0, 1) // m0: 2/1 = 2 against m1: 1
			},
			want: 1},
		{name: "(c) the longest wait W raises a member's cost", weights: equal(2), rand: []uint64{drawn(0, 0)},
			setup: func(t *testing.T, f *fixture, r *pool.Request, n *pool.Need) {
				f.sample(t, 0, 10*time.Millisecond, true)
				f.sample(t, 1, 10*time.Millisecond, true)
				f.inFlight(t, 0, 1)
				f.inFlight(t, 1, 1)
				var q pool.Request
				f.choose(t, &q, pool.Need{CanServe: only(0)}).FirstContent(f.c.Now())
				f.c.Advance(2 * time.Second) // m0's oldest and m1's waited 2 s; m1 has one fewer in flight
				n.Stream = true
			},
			want: 1},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := newFixture(t, row.weights, func(s *pool.Settings, _ []breaker.Settings) {
				if row.rand != nil {
					s.Rand = seq(row.rand...)
				}
			})
			var r pool.Request
			var n pool.Need
			row.setup(t, f, &r, &n)
			want := row.want
			if want == -2 {
				want = homeAmong(f, n.Session, 0, 2)
			}
			a, err := f.p.Choose(f.c.Now(), &r, n)
			if want < 0 {
				if !errors.Is(err, pool.ErrUnavailable) {
					t.Fatalf("Choose = m%d, %v; want ErrUnavailable", a.Member(), err)
				}
				return
			}
			if err != nil || a.Member() != want {
				t.Fatalf("Choose = m%d, %v; want m%d", a.Member(), err, want)
			}
		})
	}
}

// homeAmong returns the member of the highest score for s among members.
func homeAmong(f *fixture, s pool.Session, members ...int) int {
	k, _ := s.Hash()
	best, top := -1, 0.0
	for _, i := range members {
		m := f.p.Member(i)
		if sc := pool.Score(k, pool.Hash(m.Name), m.Weight); best < 0 || sc > top {
			best, top = i, sc
		}
	}
	return best
}
