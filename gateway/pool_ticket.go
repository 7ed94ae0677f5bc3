package gateway

import (
	"time"

	"github.com/loopctl/loopctl-go/fallback"

	"github.com/loopctl/loopctl-go/pool"
)

// poolTurn is the served member of a pool attempt, carried by the ticket
// that relays its answer: settling the ticket (when the answer is written,
// or the stream ends) settles the member's attempt with the same verdict,
// ends the pool attempt (pool.End) and settles the model breaker's ticket
// with the pool attempt's verdict, once.
type poolTurn struct {
	pd     *pooled
	req    *pool.Request
	open   pool.Attempt     // the served member's attempt
	offset time.Duration    // from the ticket's issue to the member attempt's start
	now    func() time.Time // the gateway's clock
	m      *meters          // counts the served member's attempt (loopctl_pool_requests_total)
	done   bool
}

// end settles the served member's attempt with settle, then t's model
// ticket with the pool attempt's verdict: Served is a success whose first
// content, firstContent after the member attempt's start, is timed from
// the ticket's issue (SEMANTICS §9.3 rule 6); Failed (the stream broke
// after content) the pool attempt's failure; a cancel (the client left)
// no verdict, whatever members failed before. o is the member attempt's
// outcome, as settle settles it (poolOutCancel: the client left).
func (pt *poolTurn) end(t ticket, settle func(pool.Attempt, time.Time), firstContent time.Duration, o memberOutcome) {
	if pt.done {
		return
	}
	pt.done = true
	now := pt.now()
	settle(pt.open, now)
	pt.m.poolAttempt(pt.pd.cfg.Name, pt.open.Name(), o)
	cancel := o == poolOutCancel
	r := pt.pd.p.End(now, pt.req)
	switch {
	case cancel:
		t.fallback.Cancel()
		t.seen.settle(VerdictCancel, 0)
	case r.Outcome == pool.Served:
		t.fallback.SuccessAfter(firstContent + pt.offset)
		t.seen.settle(VerdictSuccess, 0)
	case r.Outcome == pool.Failed:
		f := poolFailure(r)
		t.fallback.Fail(f)
		t.seen.settle(VerdictFailure, f.Kind)
	default:
		t.fallback.Cancel()
		t.seen.settle(VerdictCancel, 0)
	}
}

// countTokensPool sends count_tokens on a pool entry pe to the member the
// pool's choice would take (pool.Peek: no in-flight slot, no verdict,
// GATEWAY §11.4), or answers it with the local estimate (§8.8) when that
// member is not an Anthropic-family upstream that counts tokens, or no
// member is admitted.
func (x *exchange) countTokensPool(pe *target, body []byte) (*target, int) {
	pd := pe.pool
	i := pd.p.Peek(x.g.now(), x.walk.pools.request(pd), x.poolNeed(pd, body))
	if i < 0 {
		x.estimateTokens(body, pe)
		return nil, answered
	}
	mt := pd.member(i)
	if mt.up.api != APIAnthropic || mt.up.cloud != nil && !mt.up.cloud.countTokens {
		x.estimateTokens(body, mt)
		return nil, answered
	}
	return mt, proceed
}

// memberFailure settles the member attempt a, which broke after its first
// content, with the verdict of the failure f.
func memberFailure(a pool.Attempt, now time.Time, f fallback.Failure) {
	switch {
	case f.Kind == fallback.Quota:
		a.QuotaExhausted(now, f.Hint)
	case f.Kind == fallback.RateLimit:
		a.RateLimited(now, f.Hint)
	case f.Timeout:
		a.TimeoutAfter(now, f.Elapsed)
	default:
		a.Failure(now)
	}
}
