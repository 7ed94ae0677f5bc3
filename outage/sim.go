package outage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/retry"
)

// epoch is the wall-clock instant the virtual clock starts at; only differences matter.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// hungError is the failure of an attempt that hung on the dead service until the
// caller's timeout. It is a net.Error-style timeout, which retry.Classify treats as
// transient.
type hungError struct{ timeout time.Duration }

func (e *hungError) Error() string { return "outage: call timed out after " + e.timeout.String() }
func (e *hungError) Timeout() bool { return true }

// errLeaseEnd is the failure of a probe cut at the end of its lease: what
// breaker.Do's context returns then.
var errLeaseEnd = fmt.Errorf("outage: probe cut at the end of its lease: %w", context.DeadlineExceeded)

// callerState is one caller's call in flight.
type callerState struct {
	busy    bool           // a call is in flight (hanging, backing off, or healthy)
	start   time.Duration  // the tick at which the call in flight started
	retries int            // retries used by the current call
	dead    bool           // the attempt in flight hangs on the dead service
	cut     bool           // the attempt in flight is a probe cut at its lease end
	probe   int            // the attempt in flight is probe number probe-1 (0: not a probe)
	permit  breaker.Permit // the attempt's permit (WithBreaker)
}

// sim is one policy's run.
type sim struct {
	loop
	s       Scenario
	policy  Policy
	callers []callerState
	b       *breaker.Breaker
	ladder  retry.Policy
	hung    error

	m       Metrics
	buckets []Bucket

	probes       []Probe
	lastBad      time.Duration // last failure or refusal
	lastHang     time.Duration // last failure of an attempt that hung
	haveBad      bool
	lastGood     time.Duration // last success
	firstSuccess time.Duration // first success at or after the fix
	haveFirst    bool

	band      []Segment
	bandState breaker.State
	leaseEnd  time.Duration // lease end of the probe last seen in flight
	lastClose time.Duration // last transition into Closed
}

// leaseEnd returns the end of a probe permit's lease as an offset of the virtual
// clock.
func leaseEnd(p breaker.Permit) time.Duration {
	end, _ := p.Deadline()
	return end.Sub(epoch)
}

// newLadder returns the retry policy whose arithmetic the simulation uses.
func newLadder(s Scenario) retry.Policy {
	n := s.Retries
	if n == 0 {
		n = -1 // retry.Policy: zero means the default, negative means none
	}
	return retry.Policy{MaxRetries: n, BaseDelay: s.RetryBase, MaxDelay: s.RetryMax}
}

// breakerSettings returns the settings of the breaker the simulation uses, without
// a clock.
func (s Scenario) breakerSettings(onChange func(string, breaker.State, breaker.State)) breaker.Settings {
	return breaker.Settings{
		Name:             "service",
		FailureThreshold: s.FailureThreshold,
		RecoveryDuration: s.Cooldown,
		ProbeTimeout:     s.ProbeTimeout,
		OnStateChange:    onChange,
	}
}

// run simulates one policy. The scenario must be valid.
func run(ctx context.Context, s Scenario, p Policy) (Outcome, error) {
	sm := &sim{
		s:       s,
		policy:  p,
		callers: make([]callerState, s.Callers),
		ladder:  newLadder(s),
		hung:    &hungError{s.Timeout},
		buckets: make([]Bucket, 0, int(s.horizon()/s.Bucket)+1),
	}
	if p == WithBreaker {
		bs := s.breakerSettings(sm.onStateChange)
		bs.Now = sm.clock
		b, err := breaker.New(bs)
		if err != nil {
			return Outcome{}, err
		}
		sm.b = b
		sm.band = []Segment{{From: 0, State: breaker.Closed}}
	}
	if err := sm.drive(ctx, s.Callers, s.Seed, s.Interval, s.horizon(), sm, sm.sample); err != nil {
		return Outcome{}, err
	}
	return sm.outcome(), nil
}

// call starts caller i's call at its tick at, unless one is in flight.
func (sm *sim) call(i int, at time.Duration) {
	if sm.callers[i].busy {
		sm.m.Skipped++
		return
	}
	sm.callers[i] = callerState{busy: true, start: at}
	sm.m.Calls++
	sm.attempt(i)
}

// callEnd frees caller i: its call ended (at once: sim schedules no
// evCallEnd).
func (sm *sim) callEnd(i int) { sm.callers[i].busy = false }

// sample extends the state band after each event (WithBreaker only).
func (sm *sim) sample() {
	if sm.b != nil {
		sm.sampleState()
	}
}

// bucket returns the bucket holding the current instant.
func (sm *sim) bucket() *Bucket {
	k := int(sm.now / sm.s.Bucket)
	for len(sm.buckets) <= k {
		sm.buckets = append(sm.buckets, Bucket{Start: time.Duration(len(sm.buckets)) * sm.s.Bucket})
	}
	return &sm.buckets[k]
}

// attempt starts an attempt of caller i's call now.
func (sm *sim) attempt(i int) {
	c := &sm.callers[i]
	c.dead, c.cut = sm.s.down(sm.now), false
	d := sm.s.Latency
	if c.dead {
		d = sm.s.Timeout
	}
	if sm.b != nil {
		permit, err := sm.b.Allow()
		if err != nil {
			sm.refused(i, err)
			return
		}
		if permit.IsProbe() {
			sm.m.Probes++
			sm.probes = append(sm.probes, Probe{At: sm.now})
			c.probe = len(sm.probes)
			// The probe's call is bounded by its lease (SEMANTICS section 1,
			// probe deadline): it hangs at most until the lease ends, then fails.
			if end := leaseEnd(permit); sm.now+d >= end {
				d, c.cut = end-sm.now, true
				sm.m.ProbesCut++
			}
		}
		c.permit = permit
	}
	sm.m.Reached++
	if c.dead {
		sm.m.ReachedDead++
		if sm.now+d > sm.s.fix() {
			sm.m.HangingAtFix++
		}
		sm.bucket().Dead++
	} else {
		sm.bucket().Healthy++
	}
	if c.dead || c.cut {
		sm.m.Waiting += d
	}
	sm.q.push(sm.now+d, evAttemptEnd, i)
}

// refused ends caller i's call after the breaker refused its attempt, or backs
// off and retries. A refused first attempt ends the call at once, refused (an
// agent routes around a refused tool). A refused retry is retried by the ladder
// as retry.Classify classifies the refusal (transient) while retries are left,
// if the breaker is half-open: its cooldown has passed and a probe is finding
// out, so the answer may come before the next attempt. An open breaker's
// refusal (a cooldown running) ends the call, failed.
func (sm *sim) refused(i int, err error) {
	c := &sm.callers[i]
	sm.bucket().Refused++
	sm.bad()
	var oe *breaker.OpenError
	switch {
	case c.retries == 0:
		sm.m.Refused++
	case errors.As(err, &oe) && oe.State == breaker.HalfOpen && c.retries < sm.s.Retries:
		sm.m.RetriesRefused++
		sm.backoff(i)
		return
	default:
		sm.m.Failed++
	}
	sm.callEnd(i)
}

// backoff schedules caller i's next attempt after the ladder's delay for its
// next retry. The delay's jitter is drawn for that caller, call and retry
// alone, so both policies wait the same for the same retry of the same call
// (common random numbers): a refusal in one run does not shift every later
// wait of every caller, which one stream drawn in event order did.
func (sm *sim) backoff(i int) {
	c := &sm.callers[i]
	d := sm.ladder.Delay(c.retries, keyedJitter(sm.s.Seed, i, c.start, c.retries))
	c.retries++
	sm.m.Waiting += d
	sm.q.push(sm.now+d, evAttempt, i)
}

// jitterStream sets the backoff jitter's PCG streams apart from the phases'
// (stream 1).
const jitterStream = 0x9e3779b97f4a7c15

// keyedJitter is the jitter of the backoff before retry number retry+1 of
// caller i's call that started at start, drawn for them alone.
func keyedJitter(seed uint64, i int, start time.Duration, retry int) float64 {
	key := uint64(i)<<40 ^ uint64(start/time.Millisecond)<<8 ^ uint64(retry)
	return rand.New(rand.NewPCG(seed, key^jitterStream)).Float64()
}

// attemptEnd delivers the outcome of caller i's attempt: it settles the permit and
// either ends the call or schedules the next attempt after the ladder's backoff.
func (sm *sim) attemptEnd(i int) {
	c := &sm.callers[i]
	var err error
	switch {
	case c.cut:
		err = errLeaseEnd
	case c.dead:
		err = sm.hung
	}
	if sm.b != nil {
		probe := c.probe > 0
		if probe {
			p := &sm.probes[c.probe-1]
			p.End, p.Failed, p.Cut = sm.now, err != nil, c.cut
			c.probe = 0
		}
		before := sm.b.Snapshot()
		if c.dead && !c.cut {
			// It hung until the caller's timeout: a timeout, dated at the
			// attempt's start (SEMANTICS section 1).
			c.permit.TimeoutAfter(sm.s.Timeout) // it ran its whole timeout (§8.4)
		} else {
			c.permit.Done(err) // a probe cut at its lease: dated at the lease end
		}
		c.permit = breaker.Permit{}
		if err != nil && !probe {
			sm.lateFailure(before, sm.b.Snapshot())
		}
	}
	if err == nil {
		sm.m.Succeeded++
		sm.lastGood = sm.now
		if !sm.haveFirst && sm.now >= sm.s.fix() {
			sm.firstSuccess, sm.haveFirst = sm.now, true
		}
		sm.callEnd(i)
		return
	}
	sm.bad()
	sm.lastHang = sm.now
	if retry.Classify(err) == retry.Transient && c.retries < sm.s.Retries {
		sm.backoff(i)
		return
	}
	sm.m.Failed++
	sm.callEnd(i)
}

// lateFailure counts what a failure of an attempt other than the probe did to
// the breaker, from its snapshots before and after: nothing (stale), a
// restarted cooldown (the next probe is due later than it was), or a probe in
// flight displaced (a half-open breaker re-opened, so the probe's verdict no
// longer counts). A timeout dated inside the outage whose cooldown has passed
// restarts no cooldown: it only moves the last failure forward (SEMANTICS §1).
func (sm *sim) lateFailure(before, after breaker.Snapshot) {
	if after == before {
		sm.m.StaleFailures++
		return
	}
	if before.State == breaker.Closed {
		return
	}
	if before.State == breaker.HalfOpen {
		sm.m.ProbesDisplaced++
	}
	due := func(s breaker.Snapshot) time.Duration { return s.LastFailure.Sub(epoch) + sm.s.Cooldown }
	if due(after) > max(due(before), sm.now) {
		sm.m.LateFailures++
	}
}

// bad records a failure or refusal now.
func (sm *sim) bad() { sm.lastBad, sm.haveBad = sm.now, true }

// onStateChange counts trips. It runs synchronously (one caller at a time).
func (sm *sim) onStateChange(_ string, from, to breaker.State) {
	if from == breaker.Closed && to == breaker.Open {
		sm.m.Trips++
		if sm.b.Snapshot().LastFailure.Sub(epoch) > sm.s.fix() {
			sm.m.TripsOnRecovered++
		}
	}
}

// outcome finishes the run's figures.
func (sm *sim) outcome() Outcome {
	end := max(sm.now, sm.s.horizon())
	m := sm.m
	fix := sm.s.fix()
	m.FirstSuccess = -1
	if sm.haveFirst {
		m.FirstSuccess = sm.firstSuccess - fix
	}
	m.Recovered = !sm.haveBad || sm.lastGood > sm.lastBad
	m.FullFlow = -1
	if m.Recovered {
		m.FullFlow = 0
		if sm.haveBad && sm.lastBad > fix {
			m.FullFlow = sm.lastBad - fix
		}
	}
	m.LastHang = max(0, sm.lastHang-fix)
	m.BreakerClosed = -1
	if sm.b != nil {
		sm.band[len(sm.band)-1].To = end
		if sm.bandState == breaker.Closed {
			m.BreakerClosed = max(0, sm.lastClose-fix)
		}
	}
	return Outcome{Policy: sm.policy, Metrics: m, Buckets: sm.buckets, Band: sm.band, Probes: sm.probes, End: end}
}
