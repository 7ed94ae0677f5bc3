package main

import (
	"github.com/loopctl/loopctl-go/pool"
)

// homes returns each session's rule 3(b) home with every member admitted
// (SEMANTICS §9.3): the member of the highest weighted rendezvous score
// over the members' names as loopctl names them (m1/x, ...), equal
// weights, computed with the pool package's own hash and score, so that
// the goals judge loopctl against the rule rather than against itself.
func homes() [sessions]int {
	var h [sessions]int
	for s := range h {
		k := pool.Hash(sessionKey(s))
		best, top := 0, 0.0
		for i, n := range memberNames {
			if sc := pool.Score(k, pool.Hash(n+"/"+model), 1); i == 0 || sc > top {
				best, top = i, sc
			}
		}
		h[s] = best
	}
	return h
}

// served counts, per session and member, the requests of recs that were
// answered well, those due in [from, until) only.
func served(recs []record, from, until int64) [sessions][3]int {
	var n [sessions][3]int
	for _, r := range recs {
		if r.ok && r.served >= 0 && int64(r.at) >= from && int64(r.at) < until {
			n[r.session][r.served]++
		}
	}
	return n
}

// top returns the member that served most of a session's requests, the
// number it served and the session's total.
func top(c [3]int) (member, most, total int) {
	for i, v := range c {
		total += v
		if v > most {
			member, most = i, v
		}
	}
	return member, most, total
}
