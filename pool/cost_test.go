package pool

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// refCost is rule 4's cost as first written: max(E, W, 1) × (in flight +
// 1) / w, E the member's fresh estimate or the lowest fresh one of the
// pool's members (0 with none).
func refCost(p *Pool, i int, t int64, kind int) float64 {
	m := &p.members[i]
	var e float64
	if own := &m.d.est[kind]; own.fresh(t) {
		e = own.ns
	} else {
		low := math.Inf(1)
		for j := range p.members {
			if o := &p.members[j].d.est[kind]; o.fresh(t) {
				low = min(low, o.ns)
			}
		}
		if !math.IsInf(low, 1) {
			e = low
		}
	}
	var w int64
	if m.d.waiting != 0 {
		w = max(0, t-m.d.oldest)
	}
	e = max(e, float64(w), 1)
	return e * float64(m.d.inFlight+1) / m.weight
}

// refHomeServes is the home's bounds as first written: the load over every
// admitted member, then the slack over every admitted cost.
func refHomeServes(p *Pool, h int, adm uint64, t int64, kind int) bool {
	var f int
	var sumW float64
	for i := range p.members {
		if adm&(1<<i) != 0 {
			f += p.members[i].d.inFlight
			sumW += p.members[i].weight
		}
	}
	if float64(p.members[h].d.inFlight) > math.Ceil(1.25*float64(f+1)*p.members[h].weight/sumW) {
		return false
	}
	low := math.Inf(1)
	for i := range p.members {
		if adm&(1<<i) != 0 {
			low = min(low, refCost(p, i, t, kind))
		}
	}
	return refCost(p, h, t, kind) <= p.slack*low
}

// scramble gives p's deployments random figures at t: estimates fresh,
// stale or unset (below 1 ns, sub-microsecond, seconds), attempts in flight
// and waiting since random starts.
func scramble(rng *rand.Rand, p *Pool, t int64) {
	for i := range p.members {
		d := p.members[i].d
		for k := range d.est {
			d.est[k] = estimate{}
			if rng.IntN(4) != 0 {
				ns := []float64{0, 0.25, rng.Float64() * 1e3, rng.Float64() * 5e9, float64(rng.IntN(3)) * 1e6}[rng.IntN(5)]
				age := []int64{0, rng.Int64N(int64(tau)), int64(tau) + rng.Int64N(1e9)}[rng.IntN(3)]
				d.est[k] = estimate{ns: ns, at: t - age, set: true}
			}
		}
		d.inFlight = []int{0, 1, 2, rng.IntN(40)}[rng.IntN(4)]
		d.waiting, d.stale = 0, false
		if d.inFlight > 0 && rng.IntN(2) == 0 {
			d.waiting = 1 + rng.IntN(d.inFlight)
			d.oldest = t - rng.Int64N(3e9) + 1e8 // some start after t: no wait
		}
	}
}

// TestPriceIsRule4: the costs the choice computes in one loop, and the
// home's bounds checked load first, are rule 4's and rule 3b's as first
// written, to the bit, over random figures, weights and admitted sets.
func TestPriceIsRule4(t *testing.T) {
	rng := rand.New(rand.NewPCG(38, 5))
	const at = int64(1_800_000_000_000_000_000)
	for trial := range 400 {
		n := 2 + rng.IntN(9)
		ws := make([]float64, n)
		for i := range ws {
			ws[i] = 1
			if trial%2 == 1 {
				ws[i] = []float64{0.1, 1, 3, rng.Float64()*5 + 0.01}[rng.IntN(4)]
			}
		}
		p := weightedPool(t, fmt.Sprintf("price%d/m", trial), ws)
		for range 50 {
			scramble(rng, p, at)
			adm := rng.Uint64()&(1<<n-1) | 1<<rng.IntN(n)
			for kind := range 2 {
				c := costs{kind: kind}
				low := p.price(at, adm, &c)
				want := math.Inf(1)
				for i := range n {
					if adm&(1<<i) == 0 {
						continue
					}
					ref := refCost(p, i, at, kind)
					want = min(want, ref)
					if math.Float64bits(p.costs[i]) != math.Float64bits(ref) {
						t.Fatalf("weights %v, member %d: cost %v, rule 4's %v", ws, i, p.costs[i], ref)
					}
				}
				if low != want {
					t.Fatalf("weights %v: lowest cost %v, want %v", ws, low, want)
				}
				h := trailing(adm)
				c = costs{kind: kind}
				if got, _ := p.homeServes(at, h, adm, &c); got != refHomeServes(p, h, adm, at, kind) {
					t.Fatalf("weights %v, admitted %#b, home %d: serves %v, want %v", ws, adm, h, got, !got)
				}
			}
		}
	}
}
