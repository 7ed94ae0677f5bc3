package pool

import (
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Attempt is one member attempt: the handle [Pool.Choose] returns, wrapping
// the member's [breaker.Permit]. Tell it the first content
// ([Attempt.FirstContent]) and the headroom the answer carried
// ([Attempt.Headroom]), then settle it exactly once with the member's
// verdict: Success, Failure, TimeoutAfter, RateLimited, QuotaExhausted,
// Cancel, NoVerdict, or Lose for a hedge's loser. Settling frees its
// in-flight slot, gives its latency sample, settles the permit (outside the
// pool's lock) and records the outcome in its [Request]. A second
// settlement, or one after the lease released the attempt, changes nothing
// but the request's memory.
//
// An Attempt is a small value: copy it freely. The zero Attempt is valid and
// its methods do nothing.
type Attempt struct {
	p               *Pool
	r               *Request
	member          int
	s               *slot
	gen             uint32
	epoch           uint32 // r's pool attempt
	probe           bool
	stream          bool
	start           int64
	seq             uint64 // the deployment's start sequence
	tokBase, inBase int64
	need, needIn    int64
}

// Member returns the index of the attempt's member in Settings.Members.
func (a Attempt) Member() int { return a.member }

// Name returns the member's name ("upstream/model"); "" for the zero Attempt.
func (a Attempt) Name() string {
	if a.p == nil {
		return ""
	}
	return a.p.members[a.member].name
}

// IsProbe reports whether the attempt holds its member breaker's probe.
func (a Attempt) IsProbe() bool { return a.probe }

// Deadline returns the attempt's lease end: for a probe its breaker's
// probe lease, else the choice + Settings.AttemptTimeout. A caller bounds
// the member's request by it; an attempt still unsettled then is released
// as a failure dated there.
func (a Attempt) Deadline() time.Time {
	if a.p == nil {
		return time.Time{}
	}
	a.p.f.mu.Lock()
	defer a.p.f.mu.Unlock()
	if s := live(a.s, a.gen); s != nil {
		return time.Unix(0, s.lease)
	}
	return time.Unix(0, satAdd(a.start, a.p.lease))
}

// FirstContent reports that the member's first content arrived at now (for
// a stream its first content chunk): the attempt stops counting in its
// member's wait W, and its time to first content is its latency sample.
// A whole answer needs no call: its first content is the answer. For a
// probe whose first content came later than its member's SlowCallAfter, the
// probe's permit is settled now ([breaker.Permit.SuccessAfter]: the breaker
// re-opens at once); the attempt's own verdict later settles only the
// pool's figures and the request.
func (a Attempt) FirstContent(now time.Time) {
	if a.p == nil {
		return
	}
	t := now.UnixNano()
	m := &a.p.members[a.member]
	var slow breaker.Permit
	a.p.f.mu.Lock()
	if s := live(a.s, a.gen); s != nil && s.waiting {
		s.first = t
		m.d.stopWaiting(s)
		if a.probe && m.slow > 0 && t-a.start > m.slow && s.isArmed() {
			slow, s.permit = s.permit, breaker.Permit{} // settled here, once
		}
	}
	a.p.f.mu.Unlock()
	slow.SuccessAfter(time.Duration(t - a.start))
}

// Headroom records what the member's answer (a success or an error) said it
// has left, as it arrived at now (SEMANTICS §9.3 rule 5).
func (a Attempt) Headroom(now time.Time, h Headroom) {
	if a.p == nil {
		return
	}
	f, d := a.p.f, a.p.members[a.member].d
	f.mu.Lock()
	was := d.limited
	d.noteHeadroom(now.UnixNano(), &h, &a)
	switch {
	case d.limited && !was:
		f.limited++
	case was && !d.limited:
		f.limited--
	}
	f.mu.Unlock()
}

// outcome is a member attempt's verdict, as recorded in its request.
type outcome int

const (
	success outcome = iota
	failure
	timeout
	rateLimited
	quotaExhausted
	noVerdict
)

// settle frees a's slot and records outcome o at now: the latency sample,
// the request's memory. It returns the permit to settle (zero when the slot
// had lapsed or was settled) and the time to first content, in ns.
func (a *Attempt) settle(now time.Time, o outcome) (breaker.Permit, int64) {
	t := now.UnixNano()
	p := a.p
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	d := p.members[a.member].d
	var pm breaker.Permit
	ttfc := t - a.start
	if s := live(a.s, a.gen); s != nil {
		if !s.waiting {
			ttfc = s.first - a.start
		}
		switch o {
		case success:
			d.est[kindOf(a.stream)].sample(t, float64(ttfc))
		case failure, timeout, rateLimited, quotaExhausted:
			d.est[0].penalize(t, p.penalty)
			d.est[1].penalize(t, p.penalty)
		}
		pm = d.release(s)
	}
	a.record(o)
	return pm, ttfc
}

// record notes outcome o in a's request: a failed probe for the request,
// the rest only while the request is still in a's pool attempt. p.f.mu must
// be held.
func (a *Attempt) record(o outcome) {
	r, bit := a.r, uint64(1)<<a.member
	if r.pool != a.p || o == noVerdict {
		return
	}
	if o != success && a.probe {
		r.probeFailed = true
	}
	if r.epoch != a.epoch {
		return
	}
	switch o {
	case success:
		r.served = true
		return
	case quotaExhausted:
		r.quota |= bit
		r.limited |= bit
	case rateLimited:
		r.limited |= bit
	case timeout:
		r.timedOut |= bit
	}
	r.failed |= bit
}

// Success reports that the member served, at now: the time to first content
// (from [Attempt.FirstContent], or now for a whole answer) is the latency
// sample and goes to the breaker as [breaker.Permit.SuccessAfter], so that
// the breaker's slow-call rules see it.
func (a Attempt) Success(now time.Time) {
	if a.p != nil {
		pm, ttfc := a.settle(now, success)
		pm.SuccessAfter(time.Duration(ttfc))
	}
}

// Failure reports a failure with a verdict (401, 403, 404, 5xx, a
// connection error): a Penalty sample, and [breaker.Permit.Failure].
func (a Attempt) Failure(now time.Time) {
	if a.p != nil {
		pm, _ := a.settle(now, failure)
		pm.Failure()
	}
}

// TimeoutAfter reports that the member gave no answer until its deadline,
// after running for ran: a failure ([breaker.Permit.TimeoutAfter], dated at
// its start). A pool attempt whose every member timed out is a timeout.
func (a Attempt) TimeoutAfter(now time.Time, ran time.Duration) {
	if a.p != nil {
		pm, _ := a.settle(now, timeout)
		pm.TimeoutAfter(ran)
	}
}

// Cancel reports that the caller gave up on the attempt: no verdict and no
// sample; a probe's slot is released.
func (a Attempt) Cancel(now time.Time) {
	if a.p != nil {
		pm, _ := a.settle(now, noVerdict)
		pm.Cancel()
	}
}

// NoVerdict reports an answer that carries no verdict against the member (a
// request the provider rejects as malformed: 400, 413, 422; a refusal the
// caller passes on): the member counts as tried, not failed, and the
// breaker's permit is cancelled.
func (a Attempt) NoVerdict(now time.Time) {
	if a.p != nil {
		pm, _ := a.settle(now, noVerdict)
		pm.Cancel()
	}
}

// Lose settles a hedged race's loser at now, its rival having produced
// first content (SEMANTICS §7.4): an attempt still waiting after at least
// hedgeAfter is a failure of its member (a Penalty sample: a member gone
// silent loses its share), anything else a cancel.
func (a Attempt) Lose(now time.Time, hedgeAfter time.Duration) {
	if a.p == nil {
		return
	}
	if a.waiting() && now.UnixNano()-a.start >= int64(hedgeAfter) {
		a.Failure(now)
		return
	}
	a.Cancel(now)
}

// waiting reports whether a is in flight with no first content yet.
func (a Attempt) waiting() bool {
	a.p.f.mu.Lock()
	defer a.p.f.mu.Unlock()
	s := live(a.s, a.gen)
	return s != nil && s.waiting
}
