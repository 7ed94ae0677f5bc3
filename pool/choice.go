package pool

import (
	"math"
	"math/bits"

	"github.com/loopctl/loopctl-go/breaker"
)

// trailing returns the index of the lowest set bit of a nonzero mask.
func trailing(m uint64) int { return bits.TrailingZeros64(m) }

// admitted returns the members of mask serve that are admitted for r at
// now (SEMANTICS §9.3 rule 2), and those of them whose probe is due. A
// member whose grant would be a probe is left out when closedOnly (a hedge)
// or once the pool attempt has held a probe or a probe of the request has
// failed. p.f.mu must be held; only pure breaker reads are made.
func (p *Pool) admitted(t int64, r *Request, n *Need, serve uint64, closedOnly bool) (adm, due uint64) {
	noProbe := closedOnly || r.probed || r.probeFailed
	for m := serve &^ r.tried; m != 0; m &= m - 1 {
		i := trailing(m)
		mb := &p.members[i]
		// A closed breaker's gate always grants: one read decides. Otherwise
		// a grant is the probe, when the gate would grant at all.
		probe := mb.b.State() != breaker.Closed
		if probe && (noProbe || !mb.b.WouldAllow()) {
			continue
		}
		if mb.d.limited && mb.d.headroomUntil(t, n) != 0 {
			continue
		}
		adm |= 1 << i
		if probe {
			due |= 1 << i
		}
	}
	return adm, due
}

// costs holds what a choice computes of the admitted members' costs.
type costs struct {
	kind    int     // 0: whole, 1: stream
	floor   float64 // the lowest fresh estimate among all members; 0: none
	floored bool    // floor is computed (only a member with no fresh estimate needs it)
}

// floorOf returns the lowest estimate of kind among the members with a
// sample within τ of t, or 0.
func (p *Pool) floorOf(t int64, kind int) float64 {
	low := math.Inf(1)
	for i := range p.members {
		if e := &p.members[i].d.est[kind]; e.fresh(t) {
			low = min(low, e.ns)
		}
	}
	if math.IsInf(low, 1) {
		return 0
	}
	return low
}

// cost returns member i's cost at t: est × (in flight + 1) / w, est =
// max(W, E) (rule 4), an estimate of 0 counting as 1 ns so that the cost is
// then proportional to (in flight + 1) / w.
func (p *Pool) cost(i int, t int64, c *costs) float64 {
	m := &p.members[i]
	var e float64
	if own := &m.d.est[c.kind]; own.fresh(t) {
		e = own.ns
	} else {
		if !c.floored {
			c.floor, c.floored = p.floorOf(t, c.kind), true
		}
		e = c.floor
	}
	e = max(e, float64(m.d.inflightWait(t)), 1)
	return e * float64(m.d.inFlight+1) / m.weight
}

// pick chooses among the admitted members adm (rule 3): a due probe first,
// then the session's home within its bounds, then the cheaper of two drawn
// by weight. It returns −1 when adm is empty. p.f.mu must be held.
func (p *Pool) pick(t int64, n *Need, adm, due uint64) int {
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
		var all [MaxMembers]float64 // the admitted members' costs, kept for the draws
		h := p.home(k, adm)
		serves, costed := p.homeServes(t, h, adm, &c, &all)
		if serves {
			return h
		}
		adm &^= 1 << h
		if adm&(adm-1) == 0 {
			return trailing(adm)
		}
		if costed {
			return p.twoChoices(t, adm, &c, &all)
		}
	}
	return p.twoChoices(t, adm, &c, nil)
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
// is checked first, as it needs no cost; costed says whether each admitted
// member's cost was left in all.
func (p *Pool) homeServes(t int64, h int, adm uint64, c *costs, all *[MaxMembers]float64) (serves, costed bool) {
	var f int
	var sumW float64
	for m := adm; m != 0; m &= m - 1 {
		i := trailing(m)
		f += p.members[i].d.inFlight
		sumW += p.members[i].weight
	}
	bound := math.Ceil(1.25 * float64(f+1) * p.members[h].weight / sumW)
	if float64(p.members[h].d.inFlight) > bound {
		return false, false
	}
	low := math.Inf(1)
	for m := adm; m != 0; m &= m - 1 {
		i := trailing(m)
		all[i] = p.cost(i, t, c)
		low = min(low, all[i])
	}
	return all[h] <= p.slack*low, true
}

// twoChoices draws two distinct members of adm (at least two) with
// probability ∝ w and returns the one of lower cost, the first drawn on a
// tie. The two draws take 32 bits each of one random value. The costs are
// read from known when it is not nil, else computed.
func (p *Pool) twoChoices(t int64, adm uint64, c *costs, known *[MaxMembers]float64) int {
	x := p.rand()
	var a, b int
	if p.equal {
		a = nth(adm, x>>32)
		b = nth(adm&^(1<<a), x&(1<<32-1))
	} else {
		var sumW float64
		for m := adm; m != 0; m &= m - 1 {
			sumW += p.members[trailing(m)].weight
		}
		a = p.draw(adm, sumW, x>>32)
		b = p.draw(adm&^(1<<a), sumW-p.members[a].weight, x&(1<<32-1))
	}
	if known != nil {
		if known[b] < known[a] {
			return b
		}
		return a
	}
	if p.cost(b, t, c) < p.cost(a, t, c) {
		return b
	}
	return a
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
