package breaker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

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
		op := next(12)
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
		case 11: // a reload with a new backoff factor: the state and n stay
			f := []float64{0, 1.5, 2, 3}[next(4)]
			s.RecoveryBackoff = f
			if err := b.Reconfigure(s); err != nil {
				fail("step %d: Reconfigure: %v", step, err)
			}
			m.expire(now) // a lapsed lease is applied under the old factor first
			m.factor = f
			log = append(log, fmt.Sprint("reconfigure factor ", f))
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
