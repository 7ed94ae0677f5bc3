package gateway

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/retrybudget"
	"github.com/loopctl/loopctl-go/pool"
)

// Hedging inside a pool (SEMANTICS §9.3 rule 7): with the model's
// hedge_after, a member attempt that has produced no first content (a
// stream's first content chunk, or a whole answer) after it is raced by a
// second member, the one pool.Hedge chooses among the admitted members
// other than the running one (never a probe). The first to serve is
// relayed; the other is cancelled at once and settled with Lose (a failure
// of its member when it had waited at least hedge_after, else a cancel).
// A hedge spends a token of the route's pool hedge bucket, fed
// hedge_budget by each request that runs a pool attempt, starting full
// with 10, as the model breaker's own hedge bucket is (§7.4); a request
// runs at most two member attempts at once.

// memberTry is one member attempt of a pool attempt and its outcome.
type memberTry struct {
	a      pool.Attempt
	mt     *target
	tk     ticket // the pool attempt's ticket with the member's observer
	res    *result
	err    error
	start  time.Time
	cancel context.CancelFunc // ends the attempt's context (a served stream is read under it)
	stop   context.CancelFunc // a raced attempt's: cancels it when its rival wins
	hedge  bool
}

// membersOutcome is how a pool attempt's member attempts (one, or a race)
// came out: the served one (nil: none), the last that failed (nil: none),
// whether the request ends with them (the client left, a halt, a limit of
// the gateway's own), and a chain entry's hedge that served or ended the
// request (pool_chainhedge.go).
type membersOutcome struct {
	won, lost *memberTry
	final     bool
	chain     *chainHedge
}

// newPoolHedges returns a pool hedge bucket for a route with settings s.
func newPoolHedges(s fallback.Settings) *retrybudget.Bucket {
	b := &retrybudget.Bucket{}
	b.Init(cmp.Or(s.HedgeBudget, fallback.DefaultHedgeBudget), 10)
	return b
}

// newTry returns the attempt a on member mt of the pool attempt of tk, not
// yet run.
func (x *exchange) newTry(tk ticket, mt *target, a pool.Attempt) *memberTry {
	return &memberTry{a: a, mt: mt, tk: x.observeMember(tk, mt)}
}

// run sends the member attempt o, on the calling goroutine.
func (x *exchange) runTry(ctx context.Context, o *memberTry, body []byte, stream bool) {
	o.start = time.Now()
	o.res, o.cancel, o.err = x.memberAttempt(ctx, o.tk, o.mt, o.a, body, stream)
}

// runMembers runs the member attempt o, and with hedging a rival as the
// rules above say. Every attempt but the served one is settled, and
// every one's cancel is left in cancels for the caller to call when the
// request is done.
func (x *exchange) runMembers(ctx context.Context, pt *poolTurn, need pool.Need, o *memberTry, body []byte, stream bool, cancels *[]context.CancelFunc) membersOutcome {
	if !x.hedging() {
		x.runTry(ctx, o, body, stream)
		*cancels = append(*cancels, o.cancel)
		return x.settleAlone(o)
	}
	return x.raceMembers(ctx, pt, need, o, body, stream, cancels)
}

// raceMembers is runMembers with hedging: o on its own goroutine and,
// past hedge_after without an answer, a hedge: another member, or with
// none admitted the next chain entry.
func (x *exchange) raceMembers(ctx context.Context, pt *poolTurn, need pool.Need, o *memberTry, body []byte, stream bool, cancels *[]context.CancelFunc) membersOutcome {
	ch := make(chan *memberTry, 2)
	x.launchTry(ctx, ch, o, body, stream, cancels)
	after := x.in.rt.settings.HedgeAfter
	timer := time.NewTimer(after)
	defer timer.Stop()
	select {
	case first := <-ch:
		return x.settleAlone(first)
	case <-timer.C:
	}
	h := x.hedgeMember(pt, need, o.tk)
	if h == nil {
		cch := make(chan tried, 1)
		if stop := x.hedgeChain(ctx, o.tk, cch, body, stream, cancels); stop != nil {
			return x.raceChain(o, ch, cch, stop)
		}
		return x.settleAlone(<-ch)
	}
	x.walk.countMember(2)
	x.g.m.hedge(x.in.rt.name, "started")
	x.launchTry(ctx, ch, h, body, stream, cancels)
	tries := []*memberTry{o, h}
	var lost *memberTry
	for running := 2; running > 0; running-- {
		d := <-ch
		x.walk.upstream += time.Since(d.start)
		served, end := x.settleTry(d)
		switch {
		case served:
			x.hedgeResult(true, d.hedge)
			x.loseRival(ch, tries, d, running-1, after)
			return membersOutcome{won: d, lost: lost}
		case end:
			x.loseRival(ch, tries, d, running-1, -1)
			return membersOutcome{lost: d, final: true}
		case d.err != nil:
			lost = d
		}
	}
	return membersOutcome{lost: lost}
}

// settleAlone settles o, which ended on its own: runMembers' outcome.
func (x *exchange) settleAlone(o *memberTry) membersOutcome {
	x.walk.upstream += time.Since(o.start)
	served, end := x.settleTry(o)
	switch {
	case served:
		return membersOutcome{won: o}
	case end || o.err != nil:
		return membersOutcome{lost: o, final: end}
	}
	return membersOutcome{}
}

// launchTry runs o on its own goroutine; it arrives on ch.
func (x *exchange) launchTry(ctx context.Context, ch chan<- *memberTry, o *memberTry, body []byte, stream bool, cancels *[]context.CancelFunc) {
	actx, cancel := context.WithCancel(ctx)
	*cancels = append(*cancels, cancel)
	o.stop = cancel
	go func() {
		x.runTry(actx, o, body, stream)
		ch <- o
	}()
}

// hedgeMember starts the hedge of the pool attempt pt: the member
// pool.Hedge chooses, within the route's pool hedge budget; nil when no
// other member is admitted or the budget is spent.
func (x *exchange) hedgeMember(pt *poolTurn, need pool.Need, tk ticket) *memberTry {
	now := x.g.now()
	if !pt.pd.p.Admits(now, pt.req, need) || !x.in.rt.poolHedges.Spend() {
		return nil
	}
	a, err := pt.pd.p.Hedge(now, pt.req, need)
	if err != nil {
		x.in.rt.poolHedges.Refund()
		return nil
	}
	h := x.newTry(tk, pt.pd.member(a.Member()), a)
	h.hedge = true
	return h
}

// loseRival cancels the n (0 or 1) attempts of tries other than won that
// are still running, and settles each as a loser: with Lose when its rival
// won (after: hedge_after; a failure of its member when it had waited that
// long, else a cancel), with a cancel when the request ends (after < 0),
// or with its own verdict when it failed on its own.
func (x *exchange) loseRival(ch <-chan *memberTry, tries []*memberTry, won *memberTry, n int, after time.Duration) {
	for _, t := range tries {
		if t != won {
			t.stop()
		}
	}
	for range n {
		r := <-ch
		if r.res != nil {
			r.res.release()
		}
		now := x.g.now()
		switch {
		case after < 0:
			r.a.Cancel(now)
			x.g.countSettled(r.mt, poolOutCancel)
			r.tk.seen.settle(VerdictCancel, 0)
		case r.err == nil || errors.Is(r.err, context.Canceled):
			r.a.Lose(now, after)
			x.g.countSettled(r.mt, poolOutCancel) // the gateway cancelled it: its rival won
			r.tk.seen.settle(VerdictCancel, 0)
		default:
			x.memberHeadroom(r.a, answerHeader(r.res, r.err))
			x.memberFailed(r.tk, r.a, r.mt, r.err, r.start)
		}
	}
}

// hedgeResult counts a race's winner in the hedge metrics.
func (x *exchange) hedgeResult(raced, hedgeWon bool) {
	if !raced {
		return
	}
	result := "lost"
	if hedgeWon {
		result = "won"
	}
	x.g.m.hedge(x.in.rt.name, result)
}
