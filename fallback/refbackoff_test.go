package fallback

import "time"

// refBackoff is the reference's trip count n of SEMANTICS §9.1, written
// from the text, not from the code: n rises on every opening a failing
// primary caused; an opening from Primary first forgets n when the manager
// has been closed (since it last entered Primary) for MaxRecoveryTimeout or
// longer; the opening that makes n = k waits base × f^(k−1), capped.
type refBackoff struct {
	base, limit time.Duration
	f           float64
	n           int
	closed      time.Time     // when the state last became Primary
	probeSlow   time.Duration // SlowCallAfter: a probe later than this re-opens (§9.2)
}

func newRefBackoff(s Settings, base time.Duration) refBackoff {
	r := refBackoff{base: base, f: s.RecoveryBackoff, limit: s.MaxRecoveryTimeout, closed: t0,
		probeSlow: s.SlowCallAfter}
	if r.limit == 0 {
		r.limit = 10 * base
	}
	return r
}

// open applies an opening at at, from state from, and returns its
// cooldown, c(n).
func (r *refBackoff) open(from State, at time.Time, raise bool) time.Duration {
	if from == Primary && at.Sub(r.closed) >= r.limit {
		r.n = 0
	}
	if raise {
		r.n++
	}
	d := r.base
	for k := 1; k < r.n && r.f > 1 && d < r.limit; k++ {
		d = time.Duration(float64(d) * r.f)
	}
	return min(d, r.limit)
}

// read is the n a pure read reports in state st at now.
func (r *refBackoff) read(st State, now time.Time) int {
	if st == Primary && now.Sub(r.closed) >= r.limit {
		return 0
	}
	return r.n
}
