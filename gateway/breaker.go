package gateway

import (
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/metrics"
)

// ticket is one attempt's turn ticket of a route's breaker (a
// fallback.Turn, settled once), or for a request without a verdict
// (count_tokens) only the model it goes to.
type ticket struct {
	turn  fallback.Turn
	model string // set: a ticket that settles nothing, for this model
}

// Model returns the upstream/model the attempt goes to.
func (t ticket) Model() string {
	if t.model != "" {
		return t.model
	}
	return t.turn.Model()
}

// Success, Fail, Cancel and Skip settle the turn (a ticket without a
// verdict: nothing).
func (t ticket) Success()                { t.turn.Success() }
func (t ticket) Fail(f fallback.Failure) { t.turn.Fail(f) }
func (t ticket) Cancel()                 { t.turn.Cancel() }
func (t ticket) Skip()                   { t.turn.Skip() }

// SuccessAfter settles the turn as a success whose first content came
// after firstContent (SEMANTICS §8.2).
func (t ticket) SuccessAfter(firstContent time.Duration) { t.turn.SuccessAfter(firstContent) }

// begin starts an attempt of the request a on the route's breaker: one
// probe per request, past the models that failed it slowly (SEMANTICS §7).
func (rt *route) begin(a *fallback.Attempts) (ticket, error) {
	t, err := rt.mgr.Next(a)
	return ticket{turn: t}, err
}

// settleSuccess records an attempt's success on its turn, with its time to
// first content (SEMANTICS §8.2: a slow call past breaker.slow_call_after),
// and in the metrics.
func (x *exchange) settleSuccess(t ticket, firstContent time.Duration) {
	t.SuccessAfter(firstContent)
	if x.in.endpoint.settles {
		x.g.m.call(x.in.rt.name, metrics.Success)
	}
}
