package gateway

import (
	"context"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/pool"
)

// A pool attempt that has waited hedge_after with no other member
// admitted hedges as a chain entry's attempt does (SEMANTICS §9.3 rule 7,
// §7.4): by Manager.Hedge, to the next usable chain entry, within the
// model breaker's own hedge bucket. The first to serve is relayed; the
// other is cancelled, a member that lost settled with Lose, a chain
// entry's attempt as hedge.go's rival.

// chainHedge is a chain entry's hedge of a pool attempt and its outcome.
type chainHedge struct {
	o      tried
	served bool // the chain entry served: relay it
	final  bool // it ended the request (the client left, a halt, a local limit): conclude it
}

// hedgeChain starts the model breaker's hedge of the pool attempt of tk to
// the next chain entry, on its own goroutine (its outcome on ch), and
// returns what cancels it; nil when the breaker gives none, or names
// another pool (a request runs one pool attempt at a time).
func (x *exchange) hedgeChain(ctx context.Context, tk ticket, ch chan<- tried, body []byte, stream bool, cancels *[]context.CancelFunc) context.CancelFunc {
	ht, ok := x.in.rt.mgr.Hedge(&x.walk.att, tk.fallback)
	if !ok {
		return nil
	}
	tg := x.in.rt.targets[ht.Model()]
	if tg == nil || tg.pool != nil {
		ht.Cancel()
		return nil
	}
	x.walk.attempts++
	x.g.m.hedge(x.in.rt.name, "started")
	stop := x.launch(ctx, ch, x.observe(ticket{fallback: ht}, x.walk.attempts, true), tg, body, stream, true)
	*cancels = append(*cancels, stop)
	return stop
}

// raceChain waits for the member attempt o (on mch) and the chain entry's
// hedge (on cch, cancelled by stop), both running, and returns
// runMembers' outcome, with the chain entry's when it served or ended the
// request.
func (x *exchange) raceChain(o *memberTry, mch <-chan *memberTry, cch <-chan tried, stop context.CancelFunc) membersOutcome {
	after := x.in.rt.settings.HedgeAfter
	select {
	case m := <-mch:
		out := x.settleAlone(m)
		if out.won == nil && !out.final {
			out.chain = x.chainEnded(<-cch) // the member failed: the hedge decides
			return out
		}
		stop()
		x.settleRival(<-cch, time.Now(), after, out.final)
		x.hedgeResult(out.won != nil, false)
		return out
	case c := <-cch:
		x.walk.upstream += time.Since(c.started)
		if c.err != nil && !x.final(c.err) {
			x.failedAttempt(c.tk, c.tg, c.err, c.started)
			return x.settleAlone(<-mch) // the hedge failed: the member decides
		}
		o.stop()
		m := <-mch
		if m.res != nil {
			m.res.release()
		}
		if c.err == nil {
			m.a.Lose(x.g.now(), after)
			x.hedgeResult(true, true)
		} else {
			m.a.Cancel(x.g.now())
		}
		x.g.countSettled(m.mt, poolOutCancel)
		m.tk.seen.settle(VerdictCancel, 0)
		return membersOutcome{final: c.err != nil, chain: &chainHedge{o: c, served: c.err == nil, final: c.err != nil}}
	}
}

// chainEnded is the outcome of the chain entry's hedge c, which ended
// after the member attempt failed: relayed when it served, concluded when
// it ended the request, else settled as a failure (nil: the pool attempt
// goes on with its next member).
func (x *exchange) chainEnded(c tried) *chainHedge {
	x.walk.upstream += time.Since(c.started)
	switch {
	case c.err == nil:
		x.hedgeResult(true, true)
		return &chainHedge{o: c, served: true}
	case x.final(c.err):
		return &chainHedge{o: c, final: true}
	}
	x.failedAttempt(c.tk, c.tg, c.err, c.started)
	return nil
}

// concludeChain ends the pool attempt of tk on pe, whose chain hedge ch
// served or ended the request: the pool attempt's verdict (its member
// lost) settles tk, then the hedge's outcome is concluded as any
// attempt's (relayed, or the request's end).
func (x *exchange) concludeChain(tk ticket, pe *target, pt *poolTurn, ch *chainHedge) (int, error) {
	r := pt.pd.p.End(x.g.now(), pt.req)
	if f := poolFailure(r); r.Outcome == pool.Failed {
		x.walk.failed(pe.ref, f, x.g.now())
		x.settleFailure(tk, metrics.Failure, f)
	} else {
		x.settle(tk, metrics.Cancel, fallback.Transient)
	}
	x.walk.last = ch.o.tg
	defer ch.o.cancel()
	return x.conclude(ch.o.tk, ch.o.tg, ch.o.res, ch.o.err, ch.o.started), ch.o.err
}
