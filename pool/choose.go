package pool

import (
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Choose chooses the member that serves r's next attempt (SEMANTICS §9.3
// rules 2 and 3) and takes its breaker's gate. It returns the [Attempt] to
// settle with the member's verdict, or, when no member is admitted, an
// [*UnavailableError] (errors.Is(err, [ErrUnavailable])). A member whose
// gate refuses after the pure read admitted it (a concurrent request took
// its probe) is left out and the choice made again: that is no failure.
// Choose also releases the attempts whose lease has ended (rule 8). It
// allocates nothing.
func (p *Pool) Choose(now time.Time, r *Request, n Need) (Attempt, error) {
	return p.choose(now, r, &n, false)
}

// Hedge chooses a second member for r while its running attempt waits for
// first content (rule 7): as [Pool.Choose], among the admitted members other
// than those r has tried, never one whose grant would be a probe. Settle the
// loser with [Attempt.Lose].
func (p *Pool) Hedge(now time.Time, r *Request, n Need) (Attempt, error) {
	return p.choose(now, r, &n, true)
}

// maxLapsed is how many lapsed attempts one touch settles; the rest wait
// for the next touch.
const maxLapsed = 8

// choose is Choose, and Hedge when hedge: reserve a member, ask its gate
// outside the lock, arm the slot; a refusal, or a probe the attempt may not
// hold, leaves the member out and chooses again.
func (p *Pool) choose(now time.Time, r *Request, n *Need, hedge bool) (Attempt, error) {
	t := now.UnixNano()
	serve := p.servable(n)
	for {
		a, ok := p.reserve(t, r, n, serve, hedge)
		if !ok {
			return Attempt{}, p.unavailable(t, r, n, serve)
		}
		pm, err := p.members[a.member].b.Allow()
		if err == nil && p.arm(&a, pm, !hedge) {
			return a, nil
		}
		if err == nil {
			pm.Cancel() // a probe this attempt may not hold
		} else {
			p.undo(&a)
		}
		serve &^= 1 << a.member
	}
}

// reserve picks a member for r among serve and takes its in-flight slot,
// before its gate is asked. It first releases lapsed attempts.
func (p *Pool) reserve(t int64, r *Request, n *Need, serve uint64, hedge bool) (Attempt, bool) {
	p.lockFresh(t)
	r.bind(p)
	adm, due := p.admitted(t, r, n, serve, hedge)
	i := p.pick(t, n, adm, due)
	var a Attempt
	if i >= 0 {
		a = p.start(t, r, i, n)
	}
	p.f.mu.Unlock()
	return a, i >= 0
}

// lockFresh locks p.f.mu after releasing the attempts whose lease ended by t
// (expire, which settles their breakers outside the lock), so that an attempt
// begins on the figures as they stand at t. Every attempt begins this way.
func (p *Pool) lockFresh(t int64) {
	p.f.mu.Lock()
	if p.f.leaseDue(t) {
		p.f.mu.Unlock()
		p.expire(t)
		p.f.mu.Lock()
	}
}

// expire releases the attempts whose lease ended by t (rule 8), on every
// deployment of the pool's Figures, up to maxLapsed of them (the rest at the
// next touch), and settles them on their breakers outside the lock: failures
// dated at the lease's end.
func (p *Pool) expire(t int64) {
	var buf [maxLapsed]lapsed
	p.f.mu.Lock()
	out := p.f.expire(t, buf[:0])
	p.f.mu.Unlock()
	for _, l := range out {
		l.permit.TimeoutAfter(time.Duration(l.ran))
	}
}

// start takes member i's slot for r's attempt at t. p.f.mu must be held.
func (p *Pool) start(t int64, r *Request, i int, n *Need) Attempt {
	a := Attempt{p: p, r: r, member: i, stream: n.Stream, epoch: r.epoch, need: n.Tokens, needIn: n.InputTokens}
	lease := satAdd(t, p.lease)
	p.members[i].d.take(&a, t, lease, p.penalty, n)
	p.f.noteLease(lease)
	a.start = t
	r.tried |= 1 << i
	r.attempted |= 1 << i
	if !r.begun {
		r.begun, r.start = true, t
	}
	return a
}

// arm gives a's slot its permit pm. A non-probe permit is stored without
// the lock (the slot is a's until it is armed, and armed publishes it to the
// lease sweep), so that a choice takes the lock once. A probe the attempt
// may not hold (a hedge's, when !mayProbe, or a second one in the pool
// attempt) frees the slot instead and returns false: the member is then left
// out of this choice, untried.
func (p *Pool) arm(a *Attempt, pm breaker.Permit, mayProbe bool) bool {
	if !pm.IsProbe() {
		a.s.permit = pm
		a.s.armed.Store(true)
		return true
	}
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	r := a.r
	if !mayProbe || r.probed || r.probeFailed {
		p.undoLocked(a)
		return false
	}
	p.armProbeLocked(a, pm)
	return true
}

// armProbeLocked arms a's slot with the probe permit pm: the pool attempt
// has held a probe, and the slot's lease is the probe's. p.f.mu must be held.
func (p *Pool) armProbeLocked(a *Attempt, pm breaker.Permit) {
	s := a.s
	if live(s, a.gen) == nil {
		return
	}
	s.permit = pm
	s.armed.Store(true)
	a.r.probed = true
	a.probe = true
	if end, ok := pm.Deadline(); ok {
		s.lease = min(s.lease, end.UnixNano())
		d := p.members[a.member].d
		d.nextLease = min(d.nextLease, s.lease)
		p.f.noteLease(s.lease)
	}
}

// undo gives back the slot of attempt a, whose gate refused: the member
// counts as not tried, and its start is uncounted when no attempt started on
// the member since.
func (p *Pool) undo(a *Attempt) {
	p.f.mu.Lock()
	p.undoLocked(a)
	p.f.mu.Unlock()
}

// undoLocked is undo with p.f.mu held.
func (p *Pool) undoLocked(a *Attempt) {
	d := p.members[a.member].d
	if live(a.s, a.gen) == nil {
		return
	}
	d.release(a.s)
	if d.starts == a.seq+1 {
		d.starts--
		d.tokens = a.tokBase - a.need
		d.input = a.inBase - a.needIn
	}
	a.r.tried &^= 1 << a.member
	a.r.attempted &^= 1 << a.member
}

// satAdd returns a + b, saturating at the int64 range.
func satAdd(a, b int64) int64 {
	if c := a + b; (c > a) == (b > 0) {
		return c
	}
	if b > 0 {
		return 1<<63 - 1
	}
	return -1 << 63
}
