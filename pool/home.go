package pool

import "math"

// home returns the member of mask adm with the highest score for session
// hash k (SEMANTICS §9.3 rule 3b); adm must not be empty. Ties go to the
// first member. It is pure, and reads nothing the pool's lock guards.
func (p *Pool) home(k uint64, adm uint64) int {
	if p.equal {
		return p.homeEqual(k, adm)
	}
	return p.homeWeighted(k, adm)
}

// homeEqual is home with equal weights: the score −w/ln(h) rises with h, so
// h alone ranks the members and no logarithm is taken.
func (p *Pool) homeEqual(k uint64, adm uint64) int {
	best, top := -1, math.Inf(-1)
	for m := adm; m != 0; m &= m - 1 {
		i := trailing(m)
		if h := unit(k, p.members[i].hash); h > top {
			best, top = i, h
		}
	}
	return best
}

// pruneMargin is the relative margin by which a member's upper bound must
// fall short of the best lower bound before homeWeighted skips its score:
// far above the rounding of the bounds and of [Score] (a few parts in 10^16),
// so that a member skipped scores strictly below the home.
const pruneMargin = 1e-9

// pruneMin and pruneMax bound the weights with which homeWeighted prunes:
// within them every bound and score is a normal float64 (h ≥ 2^−54, 1 − h ≥
// 2^−53), so that each carries only its rounding. A pool with a weight
// outside scores every member.
const (
	pruneMin = 0x1p-500
	pruneMax = 0x1p500
)

// homeWeighted is home with unequal weights: the highest [Score], with the
// logarithm taken only for the members that may have it. For h in (0, 1),
// 1 − h < −ln(h) < (1 − h)/h, so a member's score lies strictly between
// w·h/(1 − h) and w/(1 − h): a member whose upper bound is below another's
// lower bound (by pruneMargin) cannot be the home, and its score is not
// computed. One pass finds the best lower bound and leaves out the members
// already below the bound so far; the scoring pass checks the rest against
// the final bound. The result is the argmax of Score exactly, ties to the
// first member, as every replica computes it. An h that rounds to 1 (Score
// −Inf) bounds nothing and is always scored.
func (p *Pool) homeWeighted(k uint64, adm uint64) int {
	if !p.prunable {
		return p.homeScored(k, adm, 0)
	}
	low := 0.0       // the best lower bound so far
	var maybe uint64 // the members not yet below it
	for m := adm; m != 0; m &= m - 1 {
		i := trailing(m)
		mb := &p.members[i]
		h := unit(k, mb.hash)
		if h < 1 && mb.weight < low*(1-pruneMargin)*(1-h) {
			continue // w/(1 − h) below a lower bound: never the home
		}
		maybe |= 1 << i
		// Never NaN: max, written out.
		if lo := mb.weight * h / (1 - h); h < 1 && lo > low {
			low = lo
		}
	}
	return p.homeScored(k, maybe, low*(1-pruneMargin))
}

// homeScored returns the member of adm with the highest Score for session
// hash k, ties to the first, scoring only the members whose upper bound
// w/(1 − h) reaches cut (0: every member).
func (p *Pool) homeScored(k uint64, adm uint64, cut float64) int {
	best, top := -1, math.Inf(-1)
	for m := adm; m != 0; m &= m - 1 {
		i := trailing(m)
		mb := &p.members[i]
		h := unit(k, mb.hash)
		if h < 1 && mb.weight < cut*(1-h) {
			continue // w/(1 − h) < cut: below the best lower bound
		}
		if sc := -mb.weight / math.Log(h); best < 0 || sc > top {
			best, top = i, sc
		}
	}
	return best
}
