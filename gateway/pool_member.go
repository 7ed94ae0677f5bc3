package gateway

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/pool"
)

// One member attempt of a pool attempt: what the request asks of a member
// (its session, its estimates, whether the member can serve it), the
// attempt itself through the normal attempt path, and its verdict on the
// member's breaker and figures (SEMANTICS §9.3 rule 1), with the headroom
// its answer announces.

// requestNeed is what the request asks of any member: its session
// (§11.2), whether it streams, and its input estimates for the members'
// token headroom (§11.3).
func (x *exchange) requestNeed(body []byte) pool.Need {
	n := pool.Need{Session: sessionOf(x.r.Header, &x.in.req), Stream: x.in.req.stream && x.in.endpoint.streams}
	n.Tokens, n.InputTokens = inputEstimate(body)
	return n
}

// memberHeadroom tells the member attempt a what its answer's headers hdr
// say it has left (§11.3: from every answer, a success or an error).
func (x *exchange) memberHeadroom(a pool.Attempt, hdr http.Header) {
	if hdr == nil {
		return
	}
	now := x.g.now()
	if h := headroomOf(hdr, now); h != (pool.Headroom{}) {
		a.Headroom(now, h)
	}
}

// answerHeader returns the headers of a member's answer: res's, or err's
// when the member answered with an error status; nil when it did not
// answer.
func answerHeader(res *result, err error) http.Header {
	var ue *upstreamError
	switch {
	case err == nil && res != nil && res.resp != nil:
		return res.resp.Header
	case errors.As(err, &ue):
		return ue.header
	}
	return nil
}

// canServe reports whether the member mt can serve the request: the
// predicate chain entries are skipped by (GATEWAY §8.3): embeddings only
// on an openai upstream, and a member on another wire than the client's
// only when the request translates.
func (x *exchange) canServe(mt *target, body []byte) bool {
	w := x.in.endpoint
	switch {
	case w == embeddingsEndpoint:
		return mt.up.api == APIOpenAI
	case mt.up.wireFor(w) != w:
		return x.walk.pools.translatable(w, body)
	}
	return true
}

// settleTry settles the member attempt o, which has ended, unless it
// served (reported): its headroom, then a refusal under on_refusal:
// fallback (§8.7) as no verdict, or its failure's verdict; end reports
// that the request ends with it.
func (x *exchange) settleTry(o *memberTry) (served, end bool) {
	x.memberHeadroom(o.a, answerHeader(o.res, o.err))
	if o.err != nil {
		return false, x.memberFailed(o.tk, o.a, o.mt, o.err, o.start)
	}
	if !x.refusal(o.res) {
		return true, false
	}
	o.res.release()
	o.a.NoVerdict(x.g.now())
	x.g.countSettled(o.mt, poolOutNoVerdict)
	o.tk.seen.settle(VerdictCancel, 0)
	x.out.refused = o.mt.ref
	return false, false
}

// memberAttempt sends the request to member mt for its attempt a: the
// normal attempt path, bounded by the attempt's lease (the returned
// cancel ends it), with no retry on the member (a failure moves on to the
// next member at once). A served stream's first content is told to a.
func (x *exchange) memberAttempt(ctx context.Context, tk ticket, mt *target, a pool.Attempt, body []byte, stream bool) (*result, context.CancelFunc, error) {
	cancel := context.CancelFunc(noCancel)
	if a.IsProbe() {
		// A probe's lease is its breaker's probe_timeout; any other
		// attempt's is timeouts.request, which its clock bounds already.
		ctx, cancel = context.WithDeadline(ctx, a.Deadline())
	}
	pol := x.in.rt.policy
	pol.Failover, pol.MaxRetries = true, -1
	pol.Budget = noRetry
	res, err := x.attemptWith(ctx, tk, mt, body, stream, pol)
	if err == nil && res.stream != nil {
		a.FirstContent(x.g.now())
	}
	return res, cancel, err
}

// noCancel is the cancel of a member attempt with no context of its own.
func noCancel() {}

// noRetry is the ladder's budget for a member attempt: no same-member retry.
func noRetry() bool { return false }

// memberFailed settles the member attempt a on mt, which failed with err
// (started at start), with its verdict (SEMANTICS §9.3 rule 1): none for a
// request the member rejects as malformed or cannot take (moves on, tried
// not failed), a cancel when the request ends (reported true), else the
// failure's kind. The observer hears of it as of any attempt.
func (x *exchange) memberFailed(tk ticket, a pool.Attempt, mt *target, err error, start time.Time) bool {
	now := x.g.now()
	tk.seen.failed(err)
	var le *localError
	var ue *upstreamError
	var unsup *wire.UnsupportedError
	var bad *wire.RequestError
	switch {
	case x.halted() || x.clientGone() || errors.As(err, &le):
		a.Cancel(now)
		x.g.countSettled(mt, poolOutCancel)
		tk.seen.settle(VerdictCancel, 0)
		return true
	case errors.As(err, &unsup) || errors.As(err, &bad):
		a.NoVerdict(now) // no upstream request was made: CanServe rules it out
	case errors.As(err, &ue) && (ue.status == 400 || ue.status == 413 || ue.status == 422):
		a.NoVerdict(now)
	default:
		f := failure(err, start)
		memberFailure(a, now, f)
		x.g.countSettled(mt, failureOutcome(f))
		tk.seen.settle(VerdictFailure, f.Kind)
		return false
	}
	x.g.countSettled(mt, poolOutNoVerdict)
	tk.seen.settle(VerdictCancel, 0)
	return false
}
