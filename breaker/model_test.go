package breaker

import (
	"fmt"
	"time"
)

// model is an independent, deliberately naive implementation of the table in
// docs/SEMANTICS.md section 1, used as the reference by the property and fuzz tests.
// It identifies the probe by a serial number instead of generations.
//
// Stale failures (rev 2): every permit carries its exact start order (a serial
// number per grant) and a coarse one, an era that the model bumps exactly where
// SEMANTICS allows an implementation to order coarsely: on every state change,
// on every probe grant, on the first failure after a clean state, on a success
// that reset the count, and on Reset. A failure is stale when its era is older
// than the era of the latest-starting counted success. The model checks itself
// against the exact rule: a failure it calls stale must have started before a
// counted success.
type model struct {
	threshold       int
	recovery, lease time.Duration

	state       State
	probeHeld   bool // HalfOpen with a probe in flight
	probeID     int  // serial number of the last granted probe
	failures    int
	lastFailure time.Time
	probeStart  time.Time
	events      []string

	starts      int // permits granted so far: the exact start order
	era         int // the coarse start order of calls granted now
	provenEra   int // era of the latest-starting counted success
	provenStart int // exact start of the latest-starting counted success
	unsound     string

	rate rateModel // §8.1, §8.2 (rev 4)

	// §9.1, §9.2, §9.3.1: the backoff's numbers, and the trip count, when
	// the breaker last closed, the cooldown's end by c(n) and by a hint
	// (zero: none), and what set the latter.
	factor           float64
	maxRec, quota    time.Duration
	slowPass         time.Duration
	trips            int
	closedAt         time.Time
	baseEnd, hintEnd time.Time
	hintCause        Cause
}

// grant hands out a permit (probe is the probe's ID, or 0).
func (m *model) grant(probe int, now time.Time) modelPermit {
	m.starts++
	p := modelPermit{probeID: probe, start: m.starts, era: m.era, issued: now}
	if probe != 0 {
		p.end = now.Add(m.lease)
	}
	return p
}

// proved records a counted success of p.
func (m *model) proved(p modelPermit) {
	m.provenEra = max(m.provenEra, p.era)
	m.provenStart = max(m.provenStart, p.start)
}

// stale reports whether a failure of p is old news, and records it if the
// coarse order ever calls stale a failure that did not start before a counted
// success.
func (m *model) stale(p modelPermit) bool {
	if p.era >= m.provenEra {
		return false
	}
	coverage[fmt.Sprint("stale failure in ", m.state, " probe held ", m.probeHeld)]++
	if p.start >= m.provenStart {
		m.unsound = fmt.Sprintf("failure of the call started %d called stale, latest counted success started %d", p.start, m.provenStart)
	}
	return true
}

// expire applies a lapsed probe lease: re-open, backdated to the lease end.
func (m *model) expire(now time.Time) {
	if m.state == HalfOpen && m.probeHeld && now.Sub(m.probeStart) >= m.lease {
		m.lastFailure = m.probeStart.Add(m.lease)
		m.trip(now)
	}
}

// allow is the gate: a permit, or the refusal's state and wait.
func (m *model) allow(now time.Time) (p modelPermit, ok bool, st State, wait time.Duration) {
	m.expire(now)
	switch m.state {
	case Closed:
		return m.grant(0, now), true, 0, 0
	case Open:
		if end := m.end(); now.Before(end) {
			return modelPermit{}, false, Open, end.Sub(now)
		}
		m.move(HalfOpen)
	default:
		if m.probeHeld {
			return modelPermit{}, false, HalfOpen, m.lease - now.Sub(m.probeStart)
		}
	}
	m.probeID++
	m.era++
	m.probeHeld, m.probeStart = true, now
	return m.grant(m.probeID, now), true, 0, 0
}

// success is a success whose first content came ttfc after its start
// (negative: not known).
func (m *model) success(p modelPermit, now time.Time, ttfc time.Duration) {
	m.expire(now)
	slow := m.rate.isSlow(ttfc)
	if m.state == Closed && m.rate.add(now, false, slow) {
		if m.failures > 0 { // §8.2: a success for every rule, then the trip
			m.proved(p)
		}
		m.failures = 0
		if now.After(m.lastFailure) {
			m.lastFailure = now
		}
		m.trip(now)
		return
	}
	switch {
	case m.state == Closed:
		if m.failures > 0 {
			m.proved(p)
			m.era++
		}
		m.failures = 0
	case m.state == HalfOpen && m.probeHeld && p.probeID == m.probeID && slowProbeRule && m.slowPass > 0 && ttfc > m.slowPass:
		coverage["slow probe"]++ // §9.2: a failure for the breaker only
		if m.failures == 0 {
			m.era++
		}
		m.failures++
		if now.After(m.lastFailure) {
			m.lastFailure = now
		}
		m.trip(now)
	case m.state == HalfOpen && m.probeHeld && p.probeID == m.probeID:
		m.proved(p)
		m.failures = 0
		m.probeHeld, m.probeStart = false, time.Time{}
		m.closedAt = now
		m.move(Closed)
	}
}

// timeoutDating switches rev 3's dating of timeouts on in the model (a test
// switches it off to check that the property test notices).
var timeoutDating = true

// timeout is a failure of a call that gave no answer until its deadline (rev
// 3), reported with how long it ran (§8.4: now − issued): a non-probe call is
// dated at its issue; a probe now, or at its lease end once the lease has run
// out.
func (m *model) timeout(p modelPermit, now time.Time) {
	at := now
	switch {
	case !timeoutDating:
	case p.probeID == 0:
		at = p.issued
	case p.end.Before(now):
		at = p.end
	}
	m.failureAt(p, now, at)
}

func (m *model) failure(p modelPermit, now time.Time) { m.failureAt(p, now, now) }

// failureAt is a failure arriving at now, dated at: the last failure becomes
// the later of its old value and at.
func (m *model) failureAt(p modelPermit, now, at time.Time) {
	m.expire(now)
	if m.stale(p) {
		return
	}
	if m.failures == 0 {
		m.era++
	}
	m.failures++
	if at.After(m.lastFailure) {
		m.lastFailure = at
	}
	switch m.state {
	case Closed:
		if rate := m.rate.add(now, true, false); m.failures >= m.threshold || rate {
			m.trip(now)
		}
	case HalfOpen:
		m.trip(now)
	case Open: // fresh bad news restarts the wait c(n), unless a later end holds
		if restart := m.lastFailure.Add(m.cool(max(m.trips, 1))); restart.After(m.baseEnd) {
			m.baseEnd = restart
		}
	}
}

// reset is the manual Reset (a lapsed lease applied first, as on every
// touch): Closed, counters cleared; every call granted before it is old news.
func (m *model) reset(now time.Time) {
	m.expire(now)
	m.failures, m.lastFailure = 0, time.Time{}
	m.probeHeld, m.probeStart = false, time.Time{}
	m.trips, m.closedAt, m.baseEnd, m.hintEnd = 0, now, time.Time{}, time.Time{}
	m.move(Closed)
	m.era++
	m.provenEra, m.provenStart = m.era, m.starts+1
}

func (m *model) cancel(p modelPermit, now time.Time) {
	m.expire(now)
	if m.state == HalfOpen && m.probeHeld && p.probeID != 0 && p.probeID == m.probeID {
		m.probeHeld, m.probeStart = false, time.Time{}
	}
}

// snapshot is the pure view at now.
func (m *model) snapshot(now time.Time) Snapshot {
	c := *m
	c.events = nil
	c.expire(now)
	s := Snapshot{State: c.state, ConsecutiveFailures: c.failures, LastFailure: c.lastFailure, ProbeStartedAt: c.probeStart, Trips: c.trips}
	switch {
	case c.state == Closed && tripsReset && now.Sub(c.closedAt) >= c.maxRec:
		s.Trips = 0
	case c.state == Open:
		s.OpenUntil, s.Cause = c.end(), CauseRecoveryTimeout
		switch {
		case c.hintEnd.After(c.baseEnd):
			s.Cause = c.hintCause
			coverage["a hint decides"]++
		case c.trips > 1 && c.factor > 1:
			s.Cause = CauseBackoff
		}
	}
	return s
}

func (m *model) wouldAllow(now time.Time) bool {
	c := *m
	c.events = nil
	_, ok, _, _ := c.allow(now)
	return ok
}
