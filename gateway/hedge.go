package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/metrics"
)

// Hedging (SEMANTICS §7.4), opt-in per model with Model.HedgeAfter: an
// attempt that has produced neither its first content (send returns at a
// stream's commit point) nor its whole answer after HedgeAfter is also
// started on the next usable model; the first to produce one is served and
// the other is cancelled at once. Nothing of either reaches the client
// before the winner is chosen, since send holds everything back until then.

// tried is one attempt's outcome in a race.
type tried struct {
	tk      ticket
	tg      *target
	res     *result
	err     error
	started time.Time
	hedge   bool
	cancel  context.CancelFunc // ends the attempt's context (a served stream is read under it)
}

// hedging reports whether the request's attempts may be hedged.
func (x *exchange) hedging() bool {
	return x.in.rt.settings.HedgeAfter > 0 && x.in.endpoint.settles && !x.in.pinned
}

// launch starts an attempt on its own goroutine; its outcome arrives on ch.
func (x *exchange) launch(ctx context.Context, ch chan<- tried, t ticket, tg *target, body []byte, stream, hedge bool) context.CancelFunc {
	actx, cancel := context.WithCancel(ctx)
	failover := x.otherUsable(tg.ref) // read here: x changes only on this goroutine
	o := tried{tk: t, tg: tg, started: time.Now(), hedge: hedge, cancel: cancel}
	go func() {
		o.res, o.err = x.attempt(actx, t, tg, body, stream, failover)
		ch <- o
	}()
	return cancel
}

// race runs the attempt of tk on tg and, past HedgeAfter, a hedge; it
// returns the outcome the request goes on with (served, or the last
// failure), every other attempt settled and finished. The caller settles
// the returned one and calls its cancel when the request is done.
func (x *exchange) race(ctx context.Context, tk ticket, tg *target, body []byte, stream bool) tried {
	ch := make(chan tried, 2)
	var cancels [2]context.CancelFunc // the first attempt's, the hedge's
	cancels[0] = x.launch(ctx, ch, tk, tg, body, stream, false)
	after := x.in.rt.settings.HedgeAfter
	timer := time.NewTimer(after)
	defer timer.Stop()
	select {
	case o := <-ch:
		x.walk.upstream += time.Since(o.started)
		return o
	case <-timer.C:
	}
	ht, ok := x.in.rt.mgr.Hedge(&x.walk.att, tk.fallback)
	if !ok {
		o := <-ch
		x.walk.upstream += time.Since(o.started)
		return o
	}
	x.walk.attempts++
	x.g.m.hedge(x.in.rt.name, "started")
	cancels[1] = x.launch(ctx, ch, ticket{fallback: ht}, x.in.rt.targets[ht.Model()], body, stream, true)
	first := <-ch
	x.walk.upstream += time.Since(first.started)
	final := first.err != nil && x.final(first.err)
	if first.err != nil && !final {
		// The first to end failed: its verdict now, and the rival decides.
		first.cancel()
		x.failedAttempt(first.tk, first.tg, first.err, first.started)
		return <-ch
	}
	rival := 1
	if first.hedge {
		rival = 0
	}
	won := time.Now()
	cancels[rival]()
	x.settleRival(<-ch, won, after, final)
	if first.err == nil {
		result := "lost"
		if first.hedge {
			result = "won"
		}
		x.g.m.hedge(x.in.rt.name, result)
	}
	return first
}

// settleRival settles the attempt cancelled when its rival won at won: no
// verdict, unless it had waited at least after by then (SEMANTICS §7.4: a
// slow call, a Transient failure of its model), or it had failed on its own.
func (x *exchange) settleRival(o tried, won time.Time, after time.Duration, final bool) {
	if o.res != nil {
		o.res.release()
	}
	o.cancel()
	switch {
	case final || o.err == nil:
		x.settle(o.tk, metrics.Cancel, 0)
	case errors.Is(o.err, context.Canceled):
		if won.Sub(o.started) >= after {
			x.settleFailure(o.tk, metrics.Failure, fallback.Failure{Kind: fallback.Transient})
			return
		}
		x.settle(o.tk, metrics.Cancel, 0)
	default:
		x.failedAttempt(o.tk, o.tg, o.err, o.started)
	}
}

// final reports whether an attempt's failure ends the request whatever the
// rival does: the client went away, the request was bad, or the gateway's
// own limit refused it.
func (x *exchange) final(err error) bool {
	var ue *upstreamError
	var le *localError
	return x.clientGone() || errors.As(err, &le) ||
		(errors.As(err, &ue) && (ue.status == 400 || ue.status == 413 || ue.status == 422))
}
