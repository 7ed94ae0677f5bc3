package pool

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/loopctl/loopctl-go/breaker"
)

// Figures holds what this process measures of each deployment, keyed by the
// member's name: its attempts in flight, its two latency estimates and its
// headroom. Pools that list one deployment share its figures when they share
// a *Figures, as the in-flight count and the headroom are the deployment's,
// whichever pool sent the request; a gateway keeps one Figures across
// reloads, so that a member keeps its figures. The zero value is ready to
// use. One mutex guards every figure of a Figures and the [Request]s of its
// pools; no callback runs under it.
type Figures struct {
	mu       sync.Mutex
	deps     map[string]*deployment
	all      []*deployment // deps' values, for the lease sweep
	leased   bool          // some attempt is in flight with a lease
	nextEnds int64         // a lower bound of the earliest lease end, when leased
	limited  int           // the deployments with a headroom figure set
}

// noteLease records that an attempt's lease ends at end. f.mu must be held.
func (f *Figures) noteLease(end int64) {
	if !f.leased || end < f.nextEnds {
		f.leased, f.nextEnds = true, end
	}
}

// leaseDue reports whether some attempt's lease may have ended by t. f.mu
// must be held.
func (f *Figures) leaseDue(t int64) bool { return f.leased && t >= f.nextEnds }

// expire releases the attempts of every deployment whose lease ended by t
// (up to cap(out) of them), appending them to out, and finds the next lease
// end. f.mu must be held.
func (f *Figures) expire(t int64, out []lapsed) []lapsed {
	f.leased, f.nextEnds = false, 0
	for _, d := range f.all {
		out = d.expire(t, out)
		if d.nextLease != math.MaxInt64 {
			f.noteLease(d.nextLease)
		}
	}
	return out
}

// deployment returns the figures of the deployment named name, created on
// first use. f.mu must be held.
func (f *Figures) deployment(name string) *deployment {
	d := f.deps[name]
	if d == nil {
		if f.deps == nil {
			f.deps = make(map[string]*deployment)
		}
		d = &deployment{nextLease: math.MaxInt64}
		f.deps[name] = d
		f.all = append(f.all, d)
	}
	return d
}

// deployment is the figures of one deployment. Times are Unix nanoseconds.
type deployment struct {
	// What every choice reads first, together (one or two cache lines).
	est      [2]estimate // whole, stream
	inFlight int
	waiting  int   // attempts in flight with no first content yet
	oldest   int64 // the earliest start among them, when !stale
	stale    bool  // oldest must be found again (the oldest stopped waiting)
	limited  bool  // some headroom figure is set (else no headroom check is needed)

	slots     []*slot // every slot: attempts in flight and free ones
	free      []int32 // the indices of the free slots
	nextLease int64   // the earliest lease end in slots; MaxInt64: none

	// Headroom: what the latest answers said was left, and what started
	// since (counted from every attempt started on the deployment).
	starts   uint64 // attempts started
	tokens   int64  // their estimated input tokens
	input    int64  // their estimated uncached input tokens
	requests figure
	tok      figure
	inTok    figure
	outTok   figure

	lastMinute minute // attempts started over the last minute, for Status
}

// slot is one attempt in flight on a deployment. A slot never moves, so an
// Attempt points at it. Every field is guarded by Figures.mu, but permit,
// which the choice stores after the gate answers, outside the lock: it is
// published by armed, and the lease sweep reads it only once armed.
type slot struct {
	permit breaker.Permit
	// armed is gen + 1 once the attempt of generation gen has stored its
	// permit: freeing the slot changes gen, which disarms it with no store.
	armed   atomic.Uint32
	start   int64 // when it was chosen
	first   int64 // when its first content came (waiting false)
	lease   int64 // when it is released if not settled
	penalty float64
	gen     uint32 // changes each time the slot is freed
	used    bool
	waiting bool  // no first content yet
	idx     int32 // its index in deployment.slots
}

// estimate is a latency estimate: the time to first content, in ns.
type estimate struct {
	ns  float64
	at  int64 // the last sample's time
	set bool
}

// fresh reports whether e had a sample within τ of now.
func (e *estimate) fresh(now int64) bool { return e.set && now-e.at < int64(tau) }

// sample moves e towards x by weight 1 − e^(−Δt/τ), Δt the time since the
// last sample, in either direction, so that one slow answer among fast ones
// moves it by its share of time; a forgotten estimate takes x as it is.
func (e *estimate) sample(now int64, x float64) {
	if !e.fresh(now) {
		*e = estimate{ns: x, at: now, set: true}
		return
	}
	if dt := now - e.at; dt > 0 {
		e.ns += (x - e.ns) * -math.Expm1(-float64(dt)/float64(tau))
		e.at = now
	}
}

// penalize applies a failure's penalty x: above the estimate (or with no
// fresh one) it replaces it at once, so a member that starts failing loses
// its share at the first failure; below, it is an ordinary sample.
func (e *estimate) penalize(now int64, x float64) {
	if !e.fresh(now) || x > e.ns {
		*e = estimate{ns: x, at: max(now, e.at), set: true}
		return
	}
	e.sample(now, x)
}

// inflightWait returns the longest wait for first content among d's attempts
// in flight, W of SEMANTICS §9.3 rule 4.
func (d *deployment) inflightWait(now int64) int64 {
	if d.waiting == 0 {
		return 0
	}
	if d.stale {
		d.oldest, d.stale = math.MaxInt64, false
		for _, s := range d.slots {
			if s.used && s.waiting {
				d.oldest = min(d.oldest, s.start)
			}
		}
	}
	return max(0, now-d.oldest)
}

// stopWaiting takes slot s (waiting) out of the wait W.
func (d *deployment) stopWaiting(s *slot) {
	s.waiting = false
	d.waiting--
	if s.start <= d.oldest {
		d.stale = true
	}
}

// take reserves a slot for an attempt started now with lease end lease,
// fills in a's slot, generation and start counts, and counts its estimated
// tokens. It allocates only when more attempts are in flight than ever before.
func (d *deployment) take(a *Attempt, now, lease int64, penalty float64, n *Need) {
	var s *slot
	if k := len(d.free); k > 0 {
		s = d.slots[d.free[k-1]]
		d.free = d.free[:k-1]
	} else {
		s = &slot{idx: int32(len(d.slots))}
		d.slots = append(d.slots, s)
	}
	d.tokens += n.Tokens
	d.input += n.InputTokens
	s.start, s.lease, s.penalty = now, lease, penalty
	s.used, s.waiting = true, true
	a.s, a.gen = s, s.gen
	a.seq, a.tokBase, a.inBase = d.starts, d.tokens, d.input
	d.starts++
	d.lastMinute.add(now)
	d.inFlight++
	if d.waiting == 0 {
		d.oldest, d.stale = now, false
	} else {
		d.oldest = min(d.oldest, now)
	}
	d.waiting++
	d.nextLease = min(d.nextLease, lease)
}

// release frees slot s and returns its permit (zero if it was never armed),
// to be settled outside the lock.
func (d *deployment) release(s *slot) breaker.Permit {
	var p breaker.Permit
	if s.isArmed() {
		p = s.permit
	}
	if s.waiting {
		d.stopWaiting(s)
	}
	d.inFlight--
	s.permit, s.first = breaker.Permit{}, 0
	s.used, s.waiting = false, false
	s.gen++
	// The index, not s: a pointer that came from an Attempt would make every
	// Attempt's pointers escape, and the caller's Request with them.
	d.free = append(d.free, s.idx)
	return p
}

// arm publishes permit pm in s for the attempt of generation gen, without
// the lock: the slot is that attempt's until it is armed.
func (s *slot) arm(pm breaker.Permit, gen uint32) {
	s.permit = pm
	s.armed.Store(gen + 1)
}

// isArmed reports whether s's attempt has stored its permit. Figures.mu
// must be held.
func (s *slot) isArmed() bool { return s.armed.Load() == s.gen+1 }

// live returns s if it still holds the attempt of generation gen, else nil.
func live(s *slot, gen uint32) *slot {
	if s != nil && s.used && s.gen == gen {
		return s
	}
	return nil
}

// lapsed is an attempt released at its lease's end, to be settled on its
// breaker outside the lock.
type lapsed struct {
	permit breaker.Permit
	ran    int64 // since the lease's end: TimeoutAfter(ran) dates it there
}

// expire releases d's attempts whose lease ended by now, as failures dated
// at the lease's end with a penalty sample, appending them to out (up to
// its capacity; the rest wait for the next touch) and returning it.
func (d *deployment) expire(now int64, out []lapsed) []lapsed {
	if now < d.nextLease {
		return out
	}
	next := int64(math.MaxInt64)
	for _, s := range d.slots {
		if !s.used {
			continue
		}
		// A slot not yet armed is a choice between its reservation and its
		// gate's answer: it is released at a later touch.
		if s.lease > now || len(out) == cap(out) || !s.isArmed() {
			next = min(next, s.lease)
			continue
		}
		d.est[0].penalize(s.lease, s.penalty)
		d.est[1].penalize(s.lease, s.penalty)
		out = append(out, lapsed{permit: s.permit, ran: now - s.lease})
		d.release(s)
	}
	d.nextLease = next
	return out
}
