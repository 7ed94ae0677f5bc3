package outage

import (
	"context"
	"slices"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/retry"
)

// BrownoutMetrics are one side's figures. Calls = Served + Backup + Failed.
type BrownoutMetrics struct {
	Calls, Served, Backup, Failed int // served by the service, by the backup, failed
	SickAttempts                  int // attempts that reached the service while it was sick
	SickFailures                  int // ... and failed
	Retries                       int // same-service retries of the ladder
	Slow                          int // attempts answered after SlowLatency
	Trips, Probes                 int
	Retrips                       int           // half-open → open: a failed, slow or lapsed probe
	SickCalls                     int           // calls started while the service was sick
	Waiting                       time.Duration // beyond a healthy answer: failed attempts, backoffs, slowness
	P50, P99                      time.Duration // call latency, calls started while sick
	FirstTrip                     time.Duration // from the start of the sickness; -1: never
	Closed                        time.Duration // from the fix until closed for good; -1: open at the end
}

// bcaller is one caller's call in flight.
type bcaller struct {
	busy    bool
	start   time.Duration // the call's tick
	at      time.Duration // the attempt's start
	retries int
	failed  bool // the attempt in flight fails
	permit  breaker.Permit
}

// bsim is one side's run.
type bsim struct {
	loop
	s       BrownoutScenario
	callers []bcaller
	b       *breaker.Breaker
	ladder  retry.Policy
	nth     int // attempts that reached the sick service
	m       BrownoutMetrics
	lat     []time.Duration
	closed  time.Duration
	tripped bool
}

// runBrownout runs one side, with the breaker settings bs.
func runBrownout(ctx context.Context, s BrownoutScenario, bs breaker.Settings) (BrownoutMetrics, error) {
	sm := &bsim{s: s, callers: make([]bcaller, s.Callers), ladder: s.ladder()}
	bs.Now = sm.clock
	bs.OnStateChange = sm.onChange
	b, err := breaker.New(bs)
	if err != nil {
		return BrownoutMetrics{}, err
	}
	sm.b, sm.m.FirstTrip = b, -1
	if err := sm.drive(ctx, s.Callers, s.Seed, s.Interval, s.horizon(), sm, nil); err != nil {
		return BrownoutMetrics{}, err
	}
	return sm.finish(), nil
}

// call starts caller i's call at its tick at, unless one is in flight.
func (sm *bsim) call(i int, at time.Duration) {
	if sm.callers[i].busy {
		return
	}
	sm.callers[i] = bcaller{busy: true, start: at}
	sm.m.Calls++
	if sm.s.sick(at) {
		sm.m.SickCalls++
	}
	sm.attempt(i)
}

// callEnd frees caller i: its call was answered.
func (sm *bsim) callEnd(i int) { sm.callers[i].busy = false }

// attempt starts an attempt of caller i's call: through the breaker to the
// service, or to the backup if refused.
func (sm *bsim) attempt(i int) {
	c := &sm.callers[i]
	p, err := sm.b.Allow()
	if err != nil {
		sm.m.Backup++
		sm.end(i, sm.now+sm.s.BackupLatency)
		return
	}
	c.permit, c.failed, c.at = p, false, sm.now
	d := sm.s.Latency
	if sm.s.sick(sm.now) {
		sm.m.SickAttempts++
		switch sm.s.Sickness {
		case Failing:
			c.failed = brownFails(sm.nth)
			sm.nth++
		case Slow:
			d = sm.s.SlowLatency
			sm.m.Slow++
			sm.m.Waiting += d - sm.s.Latency
		}
	}
	sm.q.push(sm.now+d, evAttemptEnd, i)
}

// brownFails reports whether the nth attempt (from 0) into the failing
// service fails: the 2nd, 5th and 8th of every 10.
func brownFails(n int) bool { r := n % 10; return r == 1 || r == 4 || r == 7 }

// attemptEnd settles caller i's attempt.
func (sm *bsim) attemptEnd(i int) {
	c := &sm.callers[i]
	if !c.failed {
		c.permit.SuccessAfter(sm.now - c.at) // an answer whole: its first content (§8.2)
		sm.m.Served++
		sm.end(i, sm.now)
		return
	}
	c.permit.Failure()
	sm.m.SickFailures++
	sm.m.Waiting += sm.s.Latency
	if c.retries < sm.s.Retries {
		d := sm.ladder.Delay(c.retries, keyedJitter(sm.s.Seed, i, c.start, c.retries))
		c.retries++
		sm.m.Retries++
		sm.m.Waiting += d
		sm.q.push(sm.now+d, evAttempt, i)
		return
	}
	sm.m.Failed++
	sm.end(i, sm.now)
}

// end ends caller i's call, answered at t (now, or when the backup answers).
func (sm *bsim) end(i int, t time.Duration) {
	c := &sm.callers[i]
	if sm.s.sick(c.start) {
		sm.lat = append(sm.lat, t-c.start)
	}
	c.permit = breaker.Permit{}
	sm.q.push(t, evCallEnd, i)
}

// onChange counts trips and probes and notes when the breaker closed. It
// runs synchronously (one caller at a time).
func (sm *bsim) onChange(_ string, from, to breaker.State) {
	switch {
	case from == breaker.Closed && to == breaker.Open:
		sm.m.Trips++
		if sm.m.FirstTrip < 0 && sm.s.sick(sm.now) {
			sm.m.FirstTrip = sm.now - sm.s.Warmup
		}
	case from == breaker.HalfOpen && to == breaker.Open:
		sm.m.Retrips++
	case to == breaker.HalfOpen:
		sm.m.Probes++
	case to == breaker.Closed:
		sm.closed = sm.now
	}
}

// finish computes the figures left.
func (sm *bsim) finish() BrownoutMetrics {
	m := sm.m
	slices.Sort(sm.lat)
	m.P50, m.P99 = pick(sm.lat, 0.5), pick(sm.lat, 0.99)
	m.Closed = -1
	if sm.b.State() == breaker.Closed {
		m.Closed = max(0, sm.closed-sm.s.fix())
	}
	return m
}

// pick returns the q-quantile of sorted ds (0 if empty).
func pick(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[int(q*float64(len(ds)-1)+0.5)]
}
