package breaker

import (
	"fmt"
	"time"
)

// The reference model's rules of SEMANTICS §9.1, §9.2 and §9.3.1 (see model).

// Switches of the §9 rules in the model alone (a test switches each off to
// check that the property test notices).
var (
	backoffRule   = true // §9.1: c(n) grows with n
	tripsReset    = true // §9.1: n = 0 after MaxRecoveryTimeout closed
	slowProbeRule = true // §9.2: a slow probe re-opens
)

// cool is c(k), computed naively: the base multiplied k−1 times, capped.
func (m *model) cool(k int) time.Duration {
	d := float64(m.recovery)
	for i := 1; i < k && backoffRule && m.factor > 1; i++ {
		if d *= m.factor; d >= float64(m.maxRec) {
			return m.maxRec
		}
	}
	return time.Duration(d)
}

// end is when an open breaker may grant a probe.
func (m *model) end() time.Time {
	if m.hintEnd.After(m.baseEnd) {
		return m.hintEnd
	}
	return m.baseEnd
}

// trip opens the breaker after a fresh failure (lastFailure set): n + 1,
// first reset on a trip from Closed after MaxRecoveryTimeout closed.
func (m *model) trip(now time.Time) {
	if m.state == Closed && tripsReset && now.Sub(m.closedAt) >= m.maxRec {
		if m.trips > 0 {
			coverage["trip count reset"]++
		}
		m.trips = 0
	}
	m.trips++
	if m.trips >= 3 {
		coverage["third trip in a row"]++
	}
	m.baseEnd, m.hintEnd = m.lastFailure.Add(m.cool(m.trips)), time.Time{}
	m.probeHeld, m.probeStart = false, time.Time{}
	m.move(Open)
}

// modelPermit is the model's permit: probeID is 0 for a non-probe permit;
// start and era order the call's start exactly and coarsely; end is a probe's
// lease end.
type modelPermit struct {
	probeID    int
	start, era int
	end        time.Time
	issued     time.Time // when the gate granted it (rev 3: a timeout's date)
}

func (m *model) move(to State) {
	if windowClears && (m.state == Closed || to == Closed) {
		m.rate.verdicts = nil // §8.1: every transition out of Closed clears the window (and Reset)
	}
	if m.state != to {
		m.events = append(m.events, m.state.String()+"->"+to.String())
		m.era++
	}
	m.state = to
}

// limit is RateLimited (quota false, hint not zero) or QuotaExhausted:
// never stale, a failure in the count, and an opening until the hint (a
// quota without one: QuotaCooldown) that does not raise n and never ends
// the cooldown in force earlier.
func (m *model) limit(now time.Time, quota bool, hint time.Time) {
	m.expire(now)
	if m.failures == 0 {
		m.era++
	}
	m.failures++
	if now.After(m.lastFailure) {
		m.lastFailure = now
	}
	until, cause := hint, CauseHint
	if quota {
		cause = CauseQuota
		if hint.IsZero() {
			until = now.Add(m.quota)
		}
	}
	if m.state != Open {
		coverage[fmt.Sprint(cause, " opening from ", m.state)]++
		if m.state == Closed && tripsReset && now.Sub(m.closedAt) >= m.maxRec {
			m.trips = 0
		}
		m.baseEnd, m.hintEnd = time.Time{}, time.Time{}
		m.probeHeld, m.probeStart = false, time.Time{}
		m.move(Open)
	}
	if until.After(m.hintEnd) {
		m.hintEnd, m.hintCause = until, cause
	}
}

// pickBackoff picks the §9.1 and §9.3.1 numbers of m: a factor (off, or
// one whose powers are exact in binary), a cap (the default 10 × the base,
// the base itself, or a few times it) and a quota cooldown.
func pickBackoff(m *model, next func(int) int) {
	factors := []float64{0, 1, 1.5, 2, 3}
	m.factor = factors[next(len(factors))]
	m.maxRec = []time.Duration{10 * m.recovery, m.recovery, 3 * m.recovery, 7*m.recovery + time.Millisecond}[next(4)]
	m.quota = 10 * time.Minute
	if next(2) == 0 {
		m.quota = time.Duration(1+next(100)) * time.Millisecond
	}
}
