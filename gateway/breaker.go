package gateway

import (
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/pool"
)

// ticket is one attempt's ticket of a route's model breaker (a
// fallback.Turn, settled once), or for a request without a verdict
// (count_tokens) only the model it goes to.
type ticket struct {
	fallback fallback.Ticket // the model breaker's ticket, settled once
	model    string          // set: a ticket that settles nothing, for this model
	seen     *observed       // the Observer's view of the attempt (nil: no Observer)
	pool     *poolTurn       // a pool attempt's served member, settled with the ticket (pool_ticket.go)
}

// Model returns the upstream/model the attempt goes to.
func (t ticket) Model() string {
	if t.model != "" {
		return t.model
	}
	return t.fallback.Model()
}

// Success, Fail, Cancel and Skip settle the ticket (a ticket without a
// verdict: nothing) and tell the Observer, if any; a pool attempt's
// ticket settles its served member with the same verdict first, and the
// model breaker with the pool attempt's. Success settles it as a success.
func (t ticket) Success() {
	if t.pool != nil {
		t.pool.end(t, pool.Attempt.Success, 0, poolOutSuccess)
		return
	}
	t.fallback.Success()
	t.seen.settle(VerdictSuccess, 0)
}

// Fail settles the ticket as failed with f.
func (t ticket) Fail(f fallback.Failure) {
	if t.pool != nil {
		t.pool.end(t, func(a pool.Attempt, now time.Time) { memberFailure(a, now, f) }, 0, failureOutcome(f))
		return
	}
	t.fallback.Fail(f)
	t.seen.settle(VerdictFailure, f.Kind)
}

// Cancel settles the ticket with no verdict.
func (t ticket) Cancel() {
	if t.pool != nil {
		t.pool.end(t, pool.Attempt.Cancel, 0, poolOutCancel)
		return
	}
	t.fallback.Cancel()
	t.seen.settle(VerdictCancel, 0)
}

// Skip settles the ticket as one its model cannot serve.
func (t ticket) Skip() {
	if t.pool != nil {
		t.pool.end(t, pool.Attempt.Cancel, 0, poolOutCancel)
		return
	}
	t.fallback.Skip()
	t.seen.settle(VerdictSkip, 0)
}

// SuccessAfter settles the ticket as a success whose first content came
// after firstContent (SEMANTICS §8.2).
func (t ticket) SuccessAfter(firstContent time.Duration) {
	if t.pool != nil {
		t.pool.end(t, pool.Attempt.Success, firstContent, poolOutSuccess)
		return
	}
	t.fallback.SuccessAfter(firstContent)
	t.seen.settle(VerdictSuccess, 0)
}

// begin starts an attempt of the request a on the route's breaker: one
// probe per request, past the models that failed it slowly (SEMANTICS §7).
func (rt *route) begin(a *fallback.Attempts) (ticket, error) {
	t, err := rt.mgr.Next(a)
	return ticket{fallback: t}, err
}

// settleSlowProbe settles a streamed probe at its first content when that
// came later than breaker.slow_call_after (SEMANTICS §9.2): the breaker
// re-opens then, whatever the stream does afterwards. The stream is still
// relayed (the probe was served: no fall-through), and its settlement at
// the end counts nothing more (a ticket counts its first settlement only).
func (x *exchange) settleSlowProbe(t ticket, firstContent time.Duration) {
	if t.pool != nil { // the model's probe only: the member settles at the stream's end
		firstContent += t.pool.offset
		t = ticket{fallback: t.fallback, seen: t.seen}
	}
	if after := x.in.rt.settings.SlowCallAfter; after > 0 && firstContent > after && t.fallback.IsProbe() {
		t.SuccessAfter(firstContent)
	}
}

// settleSuccess records an attempt's success on its ticket, with its time to
// first content (SEMANTICS §8.2: a slow call past breaker.slow_call_after),
// and in the metrics.
func (x *exchange) settleSuccess(t ticket, firstContent time.Duration) {
	t.SuccessAfter(firstContent)
	if x.in.endpoint.settles {
		x.g.m.call(x.in.rt.name, metrics.Success)
	}
}
