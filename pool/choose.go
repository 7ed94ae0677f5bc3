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
	a := Attempt{p: p, r: r}
	if err := p.choose(now.UnixNano(), &n, false, &a); err != nil {
		return Attempt{}, err
	}
	return a, nil
}

// Hedge chooses a second member for r while its running attempt waits for
// first content (rule 7): as [Pool.Choose], among the admitted members other
// than those r has tried, never one whose grant would be a probe. Settle the
// loser with [Attempt.Lose].
func (p *Pool) Hedge(now time.Time, r *Request, n Need) (Attempt, error) {
	a := Attempt{p: p, r: r}
	if err := p.choose(now.UnixNano(), &n, true, &a); err != nil {
		return Attempt{}, err
	}
	return a, nil
}

// maxLapsed is how many lapsed attempts one touch settles; the rest wait
// for the next touch.
const maxLapsed = 8

// choose is Choose, and Hedge when hedge, for the request a.r, filling in
// *a: reserve a member, ask its gate outside the lock, arm the slot; a
// refusal, or a probe the attempt may not hold, leaves the member out and
// chooses again. The attempt is built in place, as it is larger than the
// registers that would return it. Its caller sets a.p and a.r: storing the
// request through a would move a caller's Request to the heap.
func (p *Pool) choose(t int64, n *Need, hedge bool, a *Attempt) error {
	serve := p.servable(n)
	for {
		if !p.reserve(t, n, serve, hedge, a) {
			return p.unavailable(t, a.r, n, serve)
		}
		pm, err := p.members[a.member].b.Allow()
		if err == nil && p.arm(a, pm, !hedge) {
			return nil
		}
		if err == nil {
			pm.Cancel() // a probe this attempt may not hold
		} else {
			p.undo(a)
		}
		serve &^= 1 << a.member
	}
}

// reserve picks a member for a.r among serve and takes its in-flight slot in
// *a, before its gate is asked; it reports false when no member is
// admitted. The breakers are read, and the session's home ranked, before
// the lock is taken (lockGates), so that the lock is held only for the
// figures.
func (p *Pool) reserve(t int64, n *Need, serve uint64, hedge bool, a *Attempt) bool {
	g := p.lockGates(t, n, serve, !hedge)
	r := a.r
	r.bind(p)
	adm, due := p.admitted(t, r, n, &g, hedge)
	i := p.pick(t, n, adm, due, g.home)
	if i >= 0 {
		p.start(t, i, n, a)
	}
	p.f.mu.Unlock()
	return i >= 0
}

// lockGates reads the gates of the members of serve (their probes' when
// probes) and ranks n's session over them (readGates, rank), then locks
// p.f.mu. When some lease has ended by t it releases those attempts
// (expire), whose settlement may change a gate, and reads the gates again:
// every choice begins on the breakers and the figures as they stand at t.
func (p *Pool) lockGates(t int64, n *Need, serve uint64, probes bool) gates {
	g := p.readGates(serve, probes)
	p.rank(&g, n)
	p.f.mu.Lock()
	if p.f.leaseDue(t) {
		p.f.mu.Unlock()
		p.expire(t)
		g = p.readGates(serve, probes)
		p.rank(&g, n)
		p.f.mu.Lock()
	}
	return g
}

// lockFresh locks p.f.mu after releasing the attempts whose lease ended by t
// (expire, which settles their breakers outside the lock), so that an attempt
// begins on the figures as they stand at t.
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

// start takes member i's slot for the attempt of request a.r at t, filling
// in *a but a.p and a.r. p.f.mu must be held.
func (p *Pool) start(t int64, i int, n *Need, a *Attempt) {
	r := a.r
	a.member, a.probe, a.stream, a.epoch, a.start = i, false, n.Stream, r.epoch, t
	a.need, a.needIn = n.Tokens, n.InputTokens
	lease := satAdd(t, p.lease)
	p.members[i].d.take(a, t, lease, p.penalty, n)
	p.f.noteLease(lease)
	r.tried |= 1 << i
	r.attempted |= 1 << i
	if !r.begun {
		r.begun, r.start = true, t
	}
}

// arm gives a's slot its permit pm. A non-probe permit is stored without
// the lock (the slot is a's until it is armed, and armed publishes it to the
// lease sweep), so that a choice takes the lock once. A probe the attempt
// may not hold (a hedge's, when !mayProbe, or a second one in the pool
// attempt) frees the slot instead and returns false: the member is then left
// out of this choice, untried.
func (p *Pool) arm(a *Attempt, pm breaker.Permit, mayProbe bool) bool {
	if !pm.IsProbe() {
		a.s.arm(pm, a.gen)
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
	s.arm(pm, a.gen)
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
