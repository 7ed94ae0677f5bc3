package pool

import (
	"math"
	"math/bits"
	"math/rand/v2"

	"github.com/loopctl/loopctl-go/breaker"
)

// trailing returns the index of the lowest set bit of a nonzero mask.
func trailing(m uint64) int { return bits.TrailingZeros64(m) }

// gates is what a choice reads of its members' breakers and of the
// session's rendezvous before it takes the pool's lock: pure reads, which
// no lock of the pool guards.
type gates struct {
	closed uint64 // members whose breaker is Closed: the gate grants, no probe
	due    uint64 // members whose gate would grant now, the grant a probe
	// home is the session's home among closed | due (rule 3b), or −1 for
	// no session, no affinity, or fewer than two of them. The admitted
	// members are a subset: when it is among them it is their home too.
	home int
}

// readGates reads the breakers of the members of serve, each once: a
// closed breaker's gate always grants, so one read decides; otherwise a
// grant is the probe, when the gate would grant at all, which is asked only
// when the choice may take a probe (not a hedge's). The home is left to
// rank.
func (p *Pool) readGates(serve uint64, probes bool) gates {
	g := gates{home: -1}
	for m := serve; m != 0; m &= m - 1 {
		if i := trailing(m); p.members[i].b.State() == breaker.Closed {
			g.closed |= 1 << i
		}
	}
	if !probes {
		return g
	}
	for m := serve &^ g.closed; m != 0; m &= m - 1 {
		if i := trailing(m); p.members[i].b.WouldAllow() {
			g.due |= 1 << i
		}
	}
	return g
}

// rank sets g.home to n's session's home over the members g may admit.
func (p *Pool) rank(g *gates, n *Need) {
	if k, ok := n.Session.Hash(); ok && p.affinity {
		if all := g.closed | g.due; all&(all-1) != 0 {
			g.home = p.home(k, all)
		}
	}
}

// admitted returns the members of g that are admitted for r at t
// (SEMANTICS §9.3 rule 2), and those of them whose probe is due. A member
// whose grant would be a probe is left out when closedOnly (a hedge) or once
// the pool attempt has held a probe or a probe of the request has failed.
// p.f.mu must be held.
func (p *Pool) admitted(t int64, r *Request, n *Need, g *gates, closedOnly bool) (adm, due uint64) {
	adm = g.closed &^ r.tried
	if !closedOnly && !r.probed && !r.probeFailed {
		due = g.due &^ r.tried
		adm |= due
	}
	if p.f.limited == 0 {
		return adm, due // no deployment has a headroom figure
	}
	for m := adm; m != 0; m &= m - 1 {
		i := trailing(m)
		if d := p.members[i].d; d.limited && !d.ample(n) && d.headroomUntil(t, n) != 0 {
			adm &^= 1 << i
		}
	}
	return adm, due & adm
}

// costs holds what a choice computes of the admitted members' costs.
type costs struct {
	kind    int     // 0: whole, 1: stream
	floor   float64 // the lowest fresh estimate among all members; 0: none
	floored bool    // floor is computed (only a member with no fresh estimate needs it)
}

// floorOf returns the lowest estimate of kind among the members with a
// sample within τ of t, or 0. (The comparisons are written out: an estimate
// is never NaN, so they are min's, with none of its NaN checks.)
func (p *Pool) floorOf(t int64, kind int) float64 {
	low, found := 0.0, false
	for i := range p.members {
		if e := &p.members[i].d.est[kind]; e.fresh(t) && (!found || e.ns < low) {
			low, found = e.ns, true
		}
	}
	return low
}

// floor returns c's floor, computing it on first use.
func (p *Pool) floor(t int64, c *costs) float64 {
	if !c.floored {
		c.floor, c.floored = p.floorOf(t, c.kind), true
	}
	return c.floor
}

// price computes the cost at t of each member of mask into p.costs, and
// returns their lowest cost. A member's cost
// is est × (in flight + 1) / w, est = max(W, E) (rule 4), an estimate of 0
// counting as 1 ns so that the cost is then proportional to (in flight + 1)
// / w. (max(E, W, 1) is written out: neither is ever NaN, and the sign of a
// zero is lost to the 1.) The members are priced in one loop, with no call
// per member. p.f.mu must be held.
func (p *Pool) price(t int64, mask uint64, c *costs) float64 {
	low := math.Inf(1)
	for m := mask; m != 0; m &= m - 1 {
		i := trailing(m)
		mb := &p.members[i]
		d := mb.d
		e := &d.est[c.kind]
		x := e.ns
		if !e.fresh(t) {
			x = p.floor(t, c)
		}
		if d.waiting != 0 {
			if w := float64(d.inflightWait(t)); w > x {
				x = w
			}
		}
		if x < 1 {
			x = 1
		}
		x = x * float64(d.inFlight+1) / mb.weight
		p.costs[i] = x
		if x < low {
			low = x
		}
	}
	return low
}

// pick chooses among the admitted members adm (rule 3): a due probe first,
// then the session's home within its bounds, then the cheaper of two drawn
// by weight. home is the session's home over a superset of adm (gates), or
// −1. It returns −1 when adm is empty. p.f.mu must be held.
func (p *Pool) pick(t int64, n *Need, adm, due uint64, home int) int {
	switch {
	case adm == 0:
		return -1
	case due != 0:
		return trailing(due)
	case adm&(adm-1) == 0:
		return trailing(adm)
	}
	c := costs{kind: kindOf(n.Stream)}
	if k, ok := n.Session.Hash(); ok && p.affinity {
		h := home
		if h < 0 || adm&(1<<h) == 0 {
			h = p.home(k, adm)
		}
		serves, costed := p.homeServes(t, h, adm, &c)
		if serves {
			return h
		}
		adm &^= 1 << h
		if adm&(adm-1) == 0 {
			return trailing(adm)
		}
		return p.twoChoices(t, adm, &c, costed)
	}
	return p.twoChoices(t, adm, &c, false)
}

// kindOf returns the estimate index for a request that streams or not.
func kindOf(stream bool) int {
	if stream {
		return 1
	}
	return 0
}

// homeServes reports whether home h serves within the bounded load
// ⌈1.25 × (F + 1) × w / Σw⌉ (F and Σw over the admitted members adm) and
// within the slack: its cost at most s × the lowest admitted cost. The load
// is checked first, as it needs no cost, and with the home's own in flight
// for F first: F is at least that, and the bound only grows with F, so
// below it the other members' need not be counted. costed says whether
// each admitted member's cost was left in p.costs, for the draws that
// follow when the home does not serve. p.f.mu must be held.
func (p *Pool) homeServes(t int64, h int, adm uint64, c *costs) (serves, costed bool) {
	w, sumW := p.members[h].weight, p.sumW(adm)
	in := p.members[h].d.inFlight
	if float64(in) > bound(in, w, sumW) && float64(in) > bound(p.inFlight(adm), w, sumW) {
		return false, false
	}
	low := p.price(t, adm, c)
	return p.costs[h] <= p.slack*low, true
}

// bound returns the bounded load ⌈1.25 × (f + 1) × w / Σw⌉ of a home of
// weight w with f in flight over admitted members of weights summing to
// sumW.
func bound(f int, w, sumW float64) float64 {
	return math.Ceil(1.25 * float64(f+1) * w / sumW)
}

// inFlight returns the attempts in flight on the members of mask. p.f.mu
// must be held.
func (p *Pool) inFlight(mask uint64) int {
	f := 0
	for m := mask; m != 0; m &= m - 1 {
		f += p.members[trailing(m)].d.inFlight
	}
	return f
}

// sumW returns the weights' sum over adm, added in member order. With equal
// weights it is the sum of that many, precomputed in the same order, so
// that it is the same figure to the bit.
func (p *Pool) sumW(adm uint64) float64 {
	if p.equal {
		return p.sums[bits.OnesCount64(adm)]
	}
	var sum float64
	for m := adm; m != 0; m &= m - 1 {
		sum += p.members[trailing(m)].weight
	}
	return sum
}

// twoChoices draws two distinct members of adm (at least two) with
// probability ∝ w and returns the one of lower cost, the first drawn on a
// tie. The two draws take 32 bits each of one random value. The costs are
// read from p.costs, computed there unless costed (homeServes left them).
// p.f.mu must be held.
func (p *Pool) twoChoices(t int64, adm uint64, c *costs, costed bool) int {
	x := p.random()
	var a, b int
	if p.equal {
		a = nth(adm, x>>32)
		b = nth(adm&^(1<<a), x&(1<<32-1))
	} else {
		sumW := p.sumW(adm)
		a = p.draw(adm, sumW, x>>32)
		b = p.draw(adm&^(1<<a), sumW-p.members[a].weight, x&(1<<32-1))
	}
	if !costed {
		p.price(t, 1<<a|1<<b, c)
	}
	if p.costs[b] < p.costs[a] {
		return b
	}
	return a
}

// random returns Settings.Rand's next value; with none, math/rand/v2's, by
// a direct call.
func (p *Pool) random() uint64 {
	if p.rand == nil {
		return rand.Uint64()
	}
	return p.rand()
}

// nth returns a member of adm drawn uniformly by the 32-bit value u: with
// equal weights, the draw ∝ w needs no sum.
func nth(adm uint64, u uint64) int {
	k := int(u * uint64(bits.OnesCount64(adm)) >> 32)
	for range k {
		adm &= adm - 1
	}
	return trailing(adm)
}

// draw returns a member of adm drawn with probability ∝ w, sumW being the
// weights' sum over adm, by the uniform 32-bit value u.
func (p *Pool) draw(adm uint64, sumW float64, u uint64) int {
	x := float64(u) / (1 << 32) * sumW
	last := 0
	for m := adm; m != 0; m &= m - 1 {
		last = trailing(m)
		if x -= p.members[last].weight; x < 0 {
			return last
		}
	}
	return last // rounding left x at or above the last weight
}
