package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/pool"
)

// A pool entry in the walk (docs/GATEWAY.md §11, SEMANTICS §9.3 rule 6):
// a ticket of the model breaker that names pool/<name> runs one pool
// attempt. Its members are tried by the pool's choice, at once and with
// no same-member retry (no request reaches one member twice), each
// through the normal attempt path (translation, timeouts, first content),
// until one serves or none is admitted; the model breaker sees the pool
// attempt's one verdict (pool.End). A member failure before content is
// invisible to the client: it counts on the member's breaker only.

// poolWalk is the walk's state in the route's pools: the request's memory
// in each pool entry it met (a member tried is not tried again), what a
// member must serve (computed once), and what the pools it routed past for
// want of an admitted member said (for §11.4's answer).
type poolWalk struct {
	first   poolReq    // the first pool met (most requests meet one)
	reqs    []*poolReq // the others
	extra   int        // members tried beyond one per pool attempt (x-loopctl-attempts counts them)
	need    pool.Need  // session, stream and token estimates; CanServe is per pool
	needSet bool
	skip    skipCheck
	out     poolsOut
	fed     bool // the route's pool hedge bucket was fed for the request
}

// poolReq is a request's memory in one pool, what it asks of the pool's
// members (need, once computed), and its pool attempt's served member.
type poolReq struct {
	pd      *pooled
	r       pool.Request
	need    pool.Need
	needSet bool
	turn    poolTurn
}

// skipCheck is what the request's body says of translation, asked once:
// the parameter no other wire can express, or why the body does not
// decode for translation (either: a member on another wire cannot serve).
type skipCheck struct {
	done  bool
	param string
	err   error
}

// poolsOut is what the pools the walk routed past for want of an admitted
// member said: how many, the earliest time a member of one may be admitted
// (zero: none known), and whether every member out was out for the
// providers' say (a hint, a quota, headroom).
type poolsOut struct {
	n       int
	retryAt time.Time
	limited bool
}

// countMember counts the n-th member a pool attempt tries: the first is
// the attempt of the request's budget (a pool attempt is one), every one
// counts in x-loopctl-attempts.
func (w *walk) countMember(n int) {
	if n == 1 {
		w.attempts++
	} else {
		w.pools.extra++
	}
}

// tried is x-loopctl-attempts: the attempts made, every member of a pool
// attempt counted.
func (w *walk) tried() int { return w.attempts + w.pools.extra }

// request returns the request's memory in the pool pd (created on first use).
func (pw *poolWalk) request(pd *pooled) *pool.Request { return &pw.of(pd).r }

// of returns the request's memory in the pool pd (created on first use).
func (pw *poolWalk) of(pd *pooled) *poolReq {
	switch {
	case pw.first.pd == pd:
		return &pw.first
	case pw.first.pd == nil:
		pw.first.pd = pd
		return &pw.first
	}
	for _, pr := range pw.reqs {
		if pr.pd == pd {
			return pr
		}
	}
	pr := &poolReq{pd: pd}
	pw.reqs = append(pw.reqs, pr)
	return pr
}

// translatable reports whether body (on the client's wire w) can reach a
// member on another wire: it decodes, and every parameter it carries can
// be expressed there (GATEWAY §8.3). The answer is computed once.
func (pw *poolWalk) translatable(w *endpoint, body []byte) bool {
	if !pw.skip.done {
		pw.skip.done = true
		pw.skip.param, pw.skip.err = wire.Skipped(w.wire, body)
	}
	return pw.skip.param == "" && pw.skip.err == nil
}

// unavailable records that the walk routed past a pool that admitted no
// member, for the reason e.
func (pw *poolWalk) unavailable(e *pool.UnavailableError) {
	o := &pw.out
	if o.n == 0 {
		o.limited = true
	}
	o.n++
	o.limited = o.limited && e.Limited
	if !e.RetryAt.IsZero() && (o.retryAt.IsZero() || e.RetryAt.Before(o.retryAt)) {
		o.retryAt = e.RetryAt
	}
}

// poolNeed returns what the request asks of a member of pd: its session,
// whether it streams, its token estimates, and which members can serve it
// (canServe, and not disabled by hand: memberdisable.go).
func (x *exchange) poolNeed(pd *pooled, body []byte) pool.Need {
	pr := x.walk.pools.of(pd)
	if !pr.needSet {
		pr.needSet = true
		pr.need = x.requestNeed(body)
		pr.need.CanServe = func(i int) bool { mt := pd.member(i); return x.canServe(mt, body) && !x.g.disabledMember(mt.ref) }
	}
	return pr.need
}

// pickPool is pick for a pool entry pe: what to do with the ticket tk that
// names it. The pool is routed past with no verdict when the walk has
// passed it or it failed this request already (as a chain entry is), when
// no member could ever serve the request (§8.3: named with the
// parameter), or when no member is admitted now (named
// pool/<name>=unavailable, §11.4).
func (x *exchange) pickPool(tk ticket, pe *target, body []byte) (*target, int) {
	if x.in.endpoint == countTokensEndpoint {
		return x.countTokensPool(pe, body)
	}
	switch {
	case x.walk.is(pe.ref, markSlow|markPassed):
		tk.Cancel()
		return nil, stopped
	case x.walk.is(pe.ref, markFailed):
		// A pool attempt of this request failed: its members were tried.
		x.skip(tk, pe, "")
		return nil, passed
	}
	pd := pe.pool
	need := x.poolNeed(pd, body)
	if !x.poolCanEver(pd, body) {
		x.passNever(tk, pe)
		return nil, passed
	}
	now := x.g.now()
	r := x.walk.pools.request(pd)
	if !pd.p.Admits(now, r, need) {
		x.passUnavailable(tk, pe, pd.p.Unavailable(now, r, need))
		return nil, passed
	}
	return pe, proceed
}

// poolCanEver reports whether some member of pd can serve the request, on
// its wire and with its parameters, whatever its breaker or a disable by
// hand says.
func (x *exchange) poolCanEver(pd *pooled, body []byte) bool {
	for _, mt := range pd.members {
		if x.canServe(mt, body) {
			return true
		}
	}
	return false
}

// poolAttempt runs the pool attempt of the ticket tk on the pool entry pe:
// members by the pool's choice until one serves (relayed: answered) or
// none is admitted; then the pool attempt's verdict settles tk (failed,
// with the last member's error) or, with none, the last member's answer
// decides (poolUnsettled). A client that went away, a halt or a limit of
// the gateway's own end it at once.
func (x *exchange) poolAttempt(ctx context.Context, tk ticket, pe *target, body []byte, stream bool) (int, error) {
	pd := pe.pool
	pr := x.walk.pools.of(pd)
	pt := &pr.turn
	*pt = poolTurn{pd: pd, req: &pr.r, now: x.g.now, m: x.g.m}
	issued := time.Now()
	need := x.poolNeed(pd, body)
	if x.hedging() && !x.walk.pools.fed {
		x.walk.pools.fed = true
		x.in.rt.poolHedges.Feed()
	}
	var cancels []context.CancelFunc // a served stream is read under its context until it ends
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	var last *memberTry
	for sent := 1; ; sent++ {
		a, err := pd.p.Choose(x.g.now(), pt.req, need)
		if err != nil {
			break
		}
		x.walk.countMember(sent)
		out := x.runMembers(ctx, pt, need, x.newTry(tk, pd.member(a.Member()), a), body, stream, &cancels)
		if out.chain != nil && (out.chain.served || out.chain.final) {
			return x.concludeChain(tk, pe, pt, out.chain)
		}
		if won := out.won; won != nil {
			pt.open, pt.offset = won.a, won.start.Sub(issued)
			won.tk.pool = pt
			x.walk.last = won.mt
			x.relay(won.tk, won.mt, won.res)
			return answered, nil
		}
		if out.lost != nil {
			last = out.lost
			x.walk.last = out.lost.mt
		}
		if out.final || ctx.Err() != nil {
			break // the request ends, or no time is left for another member
		}
	}
	r := pd.p.End(x.g.now(), pt.req)
	if last == nil {
		return x.concludePool(tk, pe, need, r, nil, nil)
	}
	return x.concludePool(tk, pe, need, r, last.err, last.mt)
}

// concludePool settles the ticket tk of a pool attempt on pe (for need)
// that no member served, by its Result r, last being the last member's
// error (on mt): the request ends when it ended the attempt (the
// client left, a halt, a local limit); a pool that tried no member is
// routed past as unavailable; one whose members all answered with no
// verdict passes on their answer as a chain entry's (§8.6: the client
// gets it); else the model breaker gets the pool attempt's failure.
func (x *exchange) concludePool(tk ticket, pe *target, need pool.Need, r pool.Result, last error, mt *target) (int, error) {
	var le *localError
	switch {
	case last != nil && (x.halted() || x.clientGone() || errors.As(last, &le)):
		return x.conclude(tk, mt, nil, last, time.Now()), last
	case r.Outcome == pool.Skipped:
		// Admits saw a member that a concurrent request's probe took.
		now := x.g.now()
		x.passUnavailable(tk, pe, pe.pool.p.Unavailable(now, x.walk.pools.request(pe.pool), need))
		return passed, nil
	case r.Outcome == pool.Unsettled:
		return x.poolUnsettled(tk, pe, last)
	}
	f := poolFailure(r)
	now := x.g.now()
	x.walk.failed(pe.ref, f, now)
	x.in.rt.noteFailure(pe.ref, f, last, now)
	x.settleFailure(tk, metrics.Failure, f)
	if pe.ref != x.in.rt.settings.Primary {
		x.walk.set(pe.ref, markFailedEntry)
	}
	return failed, last
}

// poolUnsettled ends a pool attempt whose members all answered with no
// verdict, the last with last: a same-wire 400, 413 or 422 is passed
// through (the request was bad); a translated one, a refusal or a request
// no member could take routes the request past the pool, as a chain
// entry's would (§8.6, §8.7).
func (x *exchange) poolUnsettled(tk ticket, pe *target, last error) (int, error) {
	var ue *upstreamError
	if errors.As(last, &ue) && (ue.status == 400 || ue.status == 413 || ue.status == 422) {
		if x.walk.last.up.wireFor(x.in.endpoint) == x.in.endpoint {
			x.passThrough(tk, ue, last)
			return answered, nil
		}
		x.walk.skips.rejected = ue
	}
	x.skip(tk, pe, "")
	return passed, nil
}

// poolFailure is the model breaker's failure of a pool attempt that
// failed (pool.Failed): its kind, its hint (the earliest time a member may
// serve again) and whether every member timed out.
func poolFailure(r pool.Result) fallback.Failure {
	f := fallback.Failure{Kind: fallback.Transient, Hint: r.Hint, Timeout: r.Timeout, Elapsed: r.Elapsed}
	switch r.Kind {
	case pool.RateLimit:
		f.Kind = fallback.RateLimit
	case pool.Quota:
		f.Kind = fallback.Quota
	}
	return f
}
