package main

import (
	"math"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// TestHomesAreThePoolsHomes: the harness's rule 3(b) homes, computed from
// pool.Hash and pool.Score, are those a pool of m1/x, m2/x, m3/x gives
// every session, and the 50 sessions are spread over the three members.
func TestHomesAreThePoolsHomes(t *testing.T) {
	var ms []pool.Member
	for _, n := range memberNames {
		b, err := breaker.New(breaker.Settings{Name: n})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, pool.Member{Name: n + "/" + model, Weight: 1, Breaker: b})
	}
	p, err := pool.New(pool.Settings{Name: "p", Members: ms})
	if err != nil {
		t.Fatal(err)
	}
	var per [3]int
	for s, h := range homes() {
		if want := p.Home(pool.SessionOf(sessionKey(s))); h != want {
			t.Errorf("session %d: home %d, the pool's %d", s, h, want)
		}
		per[h]++
	}
	for i, n := range per {
		if n < 5 {
			t.Errorf("member %d is home to %d of %d sessions (%v): the load would not show affinity", i, n, sessions, per)
		}
	}
}

// testResult builds a result from arrivals at m3 and client records, with m3
// sick from 10s to 40s of a 60s load.
func testResult(recs []record, arr [3][]arrival) *result {
	return &result{sched: schedule{start: 0, from: 10 * time.Second, to: 40 * time.Second, end: 60 * time.Second}, recs: recs, arr: arr}
}

// homed returns a session homed on member m.
func homed(t *testing.T, m int) int {
	t.Helper()
	for s, h := range homes() {
		if h == m {
			return s
		}
	}
	t.Fatalf("no session is homed on member %d", m)
	return -1
}

func TestGoals(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	h0, h2 := homed(t, 0), homed(t, sickMember)
	ok := func(at float64, session, member int) record {
		return record{at: sec(at), session: session, sent: true, ok: true, served: member, ttfc: 10 * time.Millisecond}
	}
	tests := []struct {
		name string
		g    goal
		recs []record
		arr  [3][]arrival
		want float64
		met  bool
	}{
		{"failures", every[0], []record{ok(1, 0, 0), {sent: true, why: "HTTP 500", served: -1}}, [3][]arrival{}, 1, false},
		{"twice", every[1], nil, [3][]arrival{{{id: "r1", keyOK: true}, {id: "r1", keyOK: true}, {id: "r1", keyOK: true}, {id: "", keyOK: true}, {id: ""}}}, 1, false},
		{"keys", every[2], nil, [3][]arrival{{{id: "r1", keyOK: true}}, {{id: "r2"}}, {{id: "", keyOK: false}}}, 2, false},
		{"sick count", sickAtMost(8), nil, [3][]arrival{2: {{id: "r1", sick: true}, {id: "r2", sick: false}, {id: "", sick: true}}}, 1, true},
		{"sick share", sickShareAtMost(0.05), []record{ok(5, 0, 0), ok(11, 0, 0), ok(12, 0, 0), ok(41, 0, 0)},
			[3][]arrival{2: {{id: "r1", sick: true}}}, 0.5, false},
		{"p99 in the window", p99AtMost(700 * time.Millisecond), []record{{at: sec(11), sent: true, ttfc: time.Second}, {at: sec(50), sent: true, ttfc: 5 * time.Second}},
			[3][]arrival{}, float64(time.Second), false},
		{"429s", m3Throttled(2), nil, [3][]arrival{2: {{id: "r1", status: 429}, {id: "r2", status: 429}, {id: "", status: 429}, {id: "r3", status: 200}}}, 2, true},
		{"one member", sessionOnOne, []record{ok(1, 0, 0), ok(2, 0, 0), ok(3, 0, 1), ok(4, 0, 0), ok(5, 1, 2)}, [3][]arrival{}, (0.75 + 1) / 2, false},
		{"home stays", homeStays, []record{ok(1, h0, 0), ok(20, h0, 0), ok(30, h0, 1), ok(50, h0, 0), ok(20, h2, 0)}, [3][]arrival{}, 0.75, false},
		{"home returns", homeReturns, []record{ok(42, h2, 0), ok(46, h2, 2), ok(50, h2, 2), ok(55, h2, 0), ok(50, h0, 0)},
			[3][]arrival{2: {{id: "r9", at: sec(41), status: 500}, {id: "r8", at: sec(45), status: 200}}}, 2.0 / 3, false},
	}
	for _, tt := range tests {
		got, measured := tt.g.measure(testResult(tt.recs, tt.arr))
		if !measured || math.Abs(got-tt.want) > 1e-9 || tt.g.met(got) != tt.met {
			t.Errorf("%s: %v (measured %v, met %v), want %v (met %v)", tt.name, got, measured, tt.g.met(got), tt.want, tt.met)
		}
	}
	if _, measured := homeReturns.measure(testResult(nil, [3][]arrival{2: {{id: "r1", at: 45 * time.Second, status: 500}}})); measured {
		t.Error("home returns measured although m3 never served again")
	}
}

// TestAffinityOfHomes: a load where every session is served by its home
// meets the three affinity goals exactly; one served round-robin misses
// them.
func TestAffinityOfHomes(t *testing.T) {
	h := homes()
	var home, spread []record
	for i, r := range plan(0, 60*time.Second, 20) {
		r.sent, r.ok = true, true
		r.served = h[r.session]
		home = append(home, r)
		r.served = i % 3
		spread = append(spread, r)
	}
	for i, g := range []goal{sessionOnOne, topIsHome, shareOfHomes} {
		v, _ := g.measure(testResult(home, [3][]arrival{}))
		if !g.met(v) {
			t.Errorf("served by their homes: %s = %v misses %s", g.text, v, g.bound())
		}
		// Round-robin spreads requests as evenly as homes may: the share goal alone can hold.
		if w, _ := g.measure(testResult(spread, [3][]arrival{})); i < 2 && g.met(w) {
			t.Errorf("round-robin: %s = %v meets %s", g.text, w, g.bound())
		}
	}
}
