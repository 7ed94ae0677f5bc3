package breaker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// model is an independent, deliberately naive implementation of the table in
// SEMANTICS.md section 1, used as the reference by the property and fuzz tests.
// It identifies the probe by a serial number instead of generations.
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
}

// modelPermit is the model's permit: probeID is 0 for a non-probe permit.
type modelPermit struct{ probeID int }

func (m *model) move(to State) {
	if m.state != to {
		m.events = append(m.events, m.state.String()+"->"+to.String())
	}
	m.state = to
}

// expire applies a lapsed probe lease: re-open, backdated to the lease end.
func (m *model) expire(now time.Time) {
	if m.state == HalfOpen && m.probeHeld && now.Sub(m.probeStart) >= m.lease {
		m.lastFailure = m.probeStart.Add(m.lease)
		m.probeHeld, m.probeStart = false, time.Time{}
		m.move(Open)
	}
}

// allow is the gate: a permit, or the refusal's state and wait.
func (m *model) allow(now time.Time) (p modelPermit, ok bool, st State, wait time.Duration) {
	m.expire(now)
	switch m.state {
	case Closed:
		return modelPermit{}, true, 0, 0
	case Open:
		if d := now.Sub(m.lastFailure); d < m.recovery {
			return modelPermit{}, false, Open, m.recovery - d
		}
		m.move(HalfOpen)
	default:
		if m.probeHeld {
			return modelPermit{}, false, HalfOpen, m.lease - now.Sub(m.probeStart)
		}
	}
	m.probeID++
	m.probeHeld, m.probeStart = true, now
	return modelPermit{probeID: m.probeID}, true, 0, 0
}

func (m *model) success(p modelPermit, now time.Time) {
	m.expire(now)
	switch {
	case m.state == Closed:
		m.failures = 0
	case m.state == HalfOpen && m.probeHeld && p.probeID == m.probeID:
		m.failures = 0
		m.probeHeld, m.probeStart = false, time.Time{}
		m.move(Closed)
	}
}

func (m *model) failure(now time.Time) {
	m.expire(now)
	m.failures++
	m.lastFailure = now
	switch m.state {
	case Closed:
		if m.failures >= m.threshold {
			m.move(Open)
		}
	case HalfOpen:
		m.probeHeld, m.probeStart = false, time.Time{}
		m.move(Open)
	}
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
	return Snapshot{State: c.state, ConsecutiveFailures: c.failures, LastFailure: c.lastFailure, ProbeStartedAt: c.probeStart}
}

func (m *model) wouldAllow(now time.Time) bool {
	c := *m
	c.events = nil
	_, ok, _, _ := c.allow(now)
	return ok
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
	}
	var mu sync.Mutex
	var events []string
	b, err := New(Settings{
		Name: "h", FailureThreshold: m.threshold, RecoveryDuration: m.recovery, ProbeTimeout: m.lease, Now: clock.Now,
		OnStateChange: func(_ string, from, to State) {
			mu.Lock()
			events = append(events, from.String()+"->"+to.String())
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	type held struct {
		p  Permit
		mp modelPermit
	}
	var permits []held
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("threshold=%d recovery=%v lease=%v\nops: %s\n%s", m.threshold, m.recovery, m.lease,
			strings.Join(log, "; "), fmt.Sprintf(format, args...))
	}
	for step := range steps {
		now := clock.Now()
		op := next(8)
		var i int
		if len(permits) > 0 {
			i = next(len(permits))
		}
		settle := func(name string, fn func(Permit), mfn func(modelPermit)) {
			if len(permits) == 0 {
				return
			}
			h := permits[i]
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
				if oe.State != st || oe.RetryIn != wait {
					fail("step %d: refusal %+v, model state %v wait %v", step, *oe, st, wait)
				}
			} else {
				permits = append(permits, held{p, mp})
			}
		case 2:
			settle("success", Permit.Success, func(p modelPermit) { m.success(p, now) })
		case 3:
			settle("failure", Permit.Failure, func(modelPermit) { m.failure(now) })
		case 4:
			settle("cancel", Permit.Cancel, func(p modelPermit) { m.cancel(p, now) })
		case 5:
			errs := []error{nil, context.Canceled, context.DeadlineExceeded, fmt.Errorf("x: %w", context.Canceled)}
			e := errs[next(len(errs))]
			settle(fmt.Sprintf("done(%v)", e), func(p Permit) { p.Done(e) }, func(p modelPermit) {
				switch {
				case e == nil:
					m.success(p, now)
				case e == context.DeadlineExceeded:
					m.failure(now)
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
		case 7:
			choices := []time.Duration{0, ms, m.recovery, m.lease, m.recovery - ms, m.lease - ms,
				time.Duration(next(int(2*max(m.recovery, m.lease)/ms))) * ms}
			d := choices[next(len(choices))]
			clock.Advance(d)
			log = append(log, fmt.Sprintf("+%v", d))
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

func TestPropertyRandomHistories(t *testing.T) {
	const histories, steps = 400, 300
	for seed := uint64(1); seed <= histories; seed++ {
		r := rand.New(rand.NewPCG(seed, 0x10097))
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			history(t, steps, r.IntN)
		})
		if t.Failed() {
			t.Logf("failing seed: %d", seed)
			return
		}
	}
}

func FuzzHistory(f *testing.F) {
	f.Add([]byte{0, 0, 0, 3, 3, 3, 0, 7, 2, 0, 2, 0})
	f.Add([]byte{1, 5, 9, 0, 3, 0, 3, 0, 3, 7, 2, 0, 0, 7, 3, 0, 4, 0, 0, 2})
	f.Add([]byte("the probe has a lease; a lost probe cannot strand the machine"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pos := 0
		next := func(n int) int {
			if pos >= len(data) {
				return 0
			}
			v := int(data[pos]) % n
			pos++
			return v
		}
		history(t, len(data), next)
	})
}
