package pool

import (
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Pin starts r's attempt on member i, whatever the choice would say: for a
// request only that member can serve (a stateful Responses request names a
// response one member made; GATEWAY §11.2). Its breaker's gate alone decides:
// a refusal returns its [*breaker.OpenError], headroom never refuses it, and
// it may be the member's probe even after another probe of r. It counts in
// the member's figures and in r like any attempt.
func (p *Pool) Pin(now time.Time, r *Request, i int, n Need) (Attempt, error) {
	t := now.UnixNano()
	p.lockFresh(t)
	r.bind(p)
	a := Attempt{p: p, r: r}
	p.start(t, i, &n, &a)
	p.f.mu.Unlock()
	pm, err := p.members[i].b.Allow()
	if err != nil {
		p.undo(&a)
		return Attempt{}, err
	}
	if pm.IsProbe() {
		p.armProbe(&a, pm)
	} else {
		p.arm(&a, pm, true)
	}
	return a, nil
}

// armProbe arms a's slot with the probe permit pm, whatever r has held.
func (p *Pool) armProbe(a *Attempt, pm breaker.Permit) {
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	p.armProbeLocked(a, pm)
}

// Peek returns the member [Pool.Choose] would choose for r at now, without
// taking a slot or a gate (a request that counts tokens goes there, with no
// verdict; GATEWAY §11.4), or −1 when none is admitted. The draws of the
// power of two choices are random, so two Peeks may differ.
func (p *Pool) Peek(now time.Time, r *Request, n Need) int {
	g := p.readGates(p.servable(&n), true)
	p.rank(&g, &n)
	t := now.UnixNano()
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	if r.pool != p {
		r = &Request{}
	}
	adm, due := p.admitted(t, r, &n, &g, false)
	return p.pick(t, &n, adm, due, g.home)
}
