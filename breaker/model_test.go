package breaker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
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

// history drives a breaker and the model with the same operations, read from
// next (which returns numbers in [0, n)), and fails t on the first divergence.
func history(t testing.TB, steps int, next func(n int) int) {
	clock := &fakeClock{}
	ms := time.Millisecond
	m := &model{
		threshold: 1 + next(4),
		recovery:  time.Duration(1+next(50)) * ms,
		lease:     time.Duration(1+next(50)) * ms,
		rate:      pickRate(next),
	}
	pickBackoff(m, next)
	var mu sync.Mutex
	var events []string
	s := Settings{
		Name: "h", FailureThreshold: m.threshold, RecoveryDuration: m.recovery, ProbeTimeout: m.lease, Now: clock.Now,
		OnStateChange: func(_ string, from, to State) {
			mu.Lock()
			events = append(events, from.String()+"->"+to.String())
			mu.Unlock()
		},
	}
	m.rate.settings(&s)
	s.RecoveryBackoff, s.MaxRecoveryTimeout, s.QuotaCooldown = m.factor, m.maxRec, m.quota
	if s.SlowCallAfter == 0 && next(3) == 0 {
		s.SlowCallAfter = time.Duration(1+next(5)) * ms // §9.2 alone, without the slow-call rate
	}
	m.slowPass, m.closedAt = s.SlowCallAfter, clock.Now()
	b, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	type held struct {
		p  Permit
		mp modelPermit
	}
	var permits []held
	var cur modelPermit // the permit settle is settling
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("threshold=%d recovery=%v lease=%v backoff=%v max=%v quota=%v slow probe=%v\nops: %s\n%s",
			m.threshold, m.recovery, m.lease, m.factor, m.maxRec, m.quota, m.slowPass,
			strings.Join(log, "; "), fmt.Sprintf(format, args...))
	}
	for step := range steps {
		now := clock.Now()
		op := next(11)
		var i int
		if len(permits) > 0 {
			// Mostly settle one of the newest permits, so that older ones
			// linger (calls that hang) and settle late, across state changes.
			if i = next(len(permits)); next(4) != 0 {
				i = len(permits) - 1 - i%min(len(permits), 3)
			}
		}
		settle := func(name string, fn func(Permit), mfn func(modelPermit)) {
			if len(permits) == 0 {
				return
			}
			h := permits[i]
			cur = h.mp
			if next(5) != 0 { // sometimes settle a permit twice
				permits = append(permits[:i], permits[i+1:]...)
			}
			log = append(log, fmt.Sprintf("%s(#%d probe=%v)", name, i, h.p.IsProbe()))
			fn(h.p)
			mfn(h.mp)
		}
		switch op {
		case 0, 1:
			would := b.WouldAllow()
			p, err := b.Allow()
			mp, ok, st, wait := m.allow(now)
			log = append(log, fmt.Sprintf("allow=%v", err == nil))
			if would != (err == nil) {
				fail("step %d: WouldAllow() = %v but Allow() err = %v", step, would, err)
			}
			if ok != (err == nil) || (ok && p.IsProbe() != (mp.probeID != 0)) {
				fail("step %d: Allow() = probe %v, %v; model ok=%v probe=%v", step, p.IsProbe(), err, ok, mp.probeID != 0)
			}
			if err != nil {
				oe := err.(*OpenError)
				if wait = (wait + ms - 1) / ms * ms; oe.State != st || oe.RetryIn != wait { // rounded up
					fail("step %d: refusal %+v, model state %v wait %v", step, *oe, st, wait)
				}
			} else {
				permits = append(permits, held{p, mp})
				if d, ok := p.Deadline(); ok != (mp.probeID != 0) || !d.Equal(mp.end) {
					fail("step %d: Deadline() = %v, %v; model lease end %v", step, d, ok, mp.end)
				}
			}
		case 2:
			if next(2) == 0 {
				settle("success", Permit.Success, func(p modelPermit) { m.success(p, now, -1) })
				break
			}
			ttfc := time.Duration(next(8)) * ms
			settle(fmt.Sprint("success after ", ttfc), func(p Permit) { p.SuccessAfter(ttfc) },
				func(p modelPermit) { m.success(p, now, ttfc) })
		case 3:
			settle("failure", Permit.Failure, func(p modelPermit) { m.failure(p, now) })
		case 4:
			settle("cancel", Permit.Cancel, func(p modelPermit) { m.cancel(p, now) })
		case 5:
			errs := []error{nil, context.Canceled, context.DeadlineExceeded, fmt.Errorf("x: %w", context.Canceled)}
			e := errs[next(len(errs))]
			var ran time.Duration
			settle(fmt.Sprintf("done(%v)", e), func(p Permit) {
				ran = now.Sub(cur.issued) // §8.4: the caller times the call
				p.DoneAfter(e, ran)
			}, func(p modelPermit) {
				switch {
				case e == nil:
					m.success(p, now, ran)
				case e == context.DeadlineExceeded:
					m.timeout(p, now)
				default:
					m.cancel(p, now)
				}
			})
		case 6:
			before := b.Snapshot()
			_, _, _ = b.State(), b.WouldAllow(), b.RetryIn()
			if after := b.Snapshot(); after != before {
				fail("step %d: pure reads changed %+v into %+v", step, before, after)
			}
		case 8:
			// A probe bounded by its lease (as breaker.Do runs it): it hangs
			// until its deadline and fails there.
			for j, h := range permits {
				end, ok := h.p.Deadline()
				if !ok {
					continue
				}
				if d := end.Sub(now); d > 0 {
					clock.Advance(d)
					now = end
				}
				permits = append(permits[:j], permits[j+1:]...)
				log = append(log, fmt.Sprintf("cut(#%d at %v)", j, end.Sub(t0)))
				if next(2) == 0 {
					h.p.Failure()
					m.failure(h.mp, now)
				} else {
					h.p.Timeout() // as Do reports it
					m.timeout(h.mp, now)
				}
				coverage["probe cut at its lease"]++
				break
			}
		case 9:
			switch {
			case next(4) == 0:
				log = append(log, "reset")
				b.Reset()
				m.reset(now)
			case len(permits) > 0:
				// The oldest call, hung since long ago, fails late.
				h := permits[0]
				permits = permits[1:]
				if next(2) == 0 {
					log = append(log, fmt.Sprintf("late failure(probe=%v)", h.p.IsProbe()))
					h.p.Failure()
					m.failure(h.mp, now)
					break
				}
				// It hung until its deadline: a timeout, dated at its start.
				log = append(log, fmt.Sprintf("late timeout(probe=%v)", h.p.IsProbe()))
				h.p.TimeoutAfter(now.Sub(h.mp.issued))
				m.timeout(h.mp, now)
				if h.mp.probeID == 0 && h.mp.issued.Before(now) {
					coverage["timeout dated before now"]++
				}
			}
		case 10:
			quota := next(2) == 0
			var hint time.Time
			if !quota || next(2) == 0 {
				hint = now.Add(time.Duration(next(120)-10) * ms)
			}
			settle(fmt.Sprintf("limit(quota=%v, hint %v)", quota, hint.Sub(now)), func(p Permit) {
				if quota {
					p.QuotaExhausted(hint)
				} else {
					p.RateLimited(hint)
				}
			}, func(modelPermit) {
				if !quota && hint.IsZero() {
					return
				}
				m.limit(now, quota, hint)
			})
		case 7:
			choices := []time.Duration{0, ms, m.recovery, m.lease, m.recovery - ms, m.lease - ms,
				time.Duration(next(int(2*max(m.recovery, m.lease)/ms))) * ms}
			d := choices[next(len(choices))]
			clock.Advance(d)
			log = append(log, fmt.Sprintf("+%v", d))
		}
		if m.unsound != "" {
			fail("step %d: the model's coarse order is unsound: %s", step, m.unsound)
		}
		now = clock.Now()
		before := b.Snapshot()
		if want := m.snapshot(now); before != want {
			fail("step %d: snapshot\n got %+v\nwant %+v", step, before, want)
		}
		if got, want := b.State(), m.snapshot(now).State; got != want {
			fail("step %d: State() %v, model %v", step, got, want)
		}
		if got, want := b.WouldAllow(), m.wouldAllow(now); got != want {
			fail("step %d: WouldAllow() %v, model %v", step, got, want)
		}
		if after := b.Snapshot(); after != before {
			fail("step %d: pure reads changed %+v into %+v", step, before, after)
		}
		mu.Lock()
		got := strings.Join(events, ",")
		mu.Unlock()
		if want := strings.Join(m.events, ","); got != want {
			fail("step %d: events\n got %s\nwant %s", step, got, want)
		}
	}
}
