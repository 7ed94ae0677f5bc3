package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/retry"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
)

// Outcomes of a request, the outcome label of loopctl_gateway_requests_total.
const (
	outcomeSuccess     = "success"
	outcomePassthrough = "client_error"   // the upstream rejected the request (400, 413, 422)
	outcomeFailure     = "upstream_error" // every attempt failed
	outcomeRateLimit   = "rate_limit"     // every attempt failed, the last rate-limited
	outcomeExhausted   = "fallback_exhausted"
	outcomeStreamError = "stream_error" // the stream broke after its first content chunk
	outcomeCancel      = "cancel"       // the client went away
	outcomeInvalid     = "invalid"      // refused before routing (auth, JSON, model)
)

// exchange is one client request in flight, in three parts by lifetime:
// what intake decided (read-only once the walk starts), the walk over the
// route's candidates (attempt by attempt), and what was written to the
// client. Data travels between the steps through these values, so each
// step's inputs are the parts it reads.
type exchange struct {
	g    *Gateway
	w    http.ResponseWriter
	r    *http.Request
	in   intake
	walk walk
	out  reply
}

// intake is what the gateway decided about a request before its first
// attempt: its endpoint and client, what its body says, its route and how
// many attempts it may take. Nothing changes it once the walk starts, so
// an attempt on its own goroutine (hedging) may read it.
type intake struct {
	endpoint  *endpoint
	client    string
	start     time.Time
	req       request          // what scan found in the body
	body      io.LimitedReader // the client's body, read within limits.max_body
	rt        *route
	budget    int        // attempts (breaker turns) the request may take
	pinned    bool       // a previous_response_id request: its model only
	pin       *memberPin // a pinned request's pool member (pool_pins.go); nil: none
	unchecked bool       // the body has not been checked with json.Valid (translatesFirst)
}

// reply is what the gateway wrote, or is about to write, to the client
// beyond the answer itself: the headers of a translated answer and of the
// response being streamed.
type reply struct {
	translated string   // x-loopctl-translated: <client wire>-><upstream wire>
	dropped    []string // x-loopctl-dropped: parameters the translation dropped
	refused    string   // x-loopctl-refused: the entry whose refusal fell back
	respID     string   // Responses: the id of the response being streamed
	length     [1]string
}

// serveWire serves a POST on wire wi: it authenticates, reads and scans the
// body, routes the model and runs the attempt loop.
func (g *Gateway) serveWire(w http.ResponseWriter, r *http.Request, wi *endpoint) {
	x := exchange{g: g, w: w, r: r, in: intake{endpoint: wi, start: time.Now()}}
	if obs := g.opt.Observer; obs != nil {
		x.r = r.WithContext(obs.StartRequest(r.Context(), RequestStart{API: wi.label}))
	}
	name, ok := g.clientName(r)
	if !ok {
		x.refuse(http.StatusUnauthorized, apiError{Message: "missing or invalid API key (send Authorization: Bearer <key> or x-api-key: <key>)", Type: "authentication_error", Code: "invalid_api_key"})
		return
	}
	x.in.client = name
	buf := getBuf()
	defer putBuf(buf)
	charged, ok := x.readBody(buf)
	defer g.held.free(charged)
	if !ok {
		return
	}
	body := buf.Bytes()
	req, err := scan(body)
	x.in.req = req // the log names the model even of a refused request
	if err != nil {
		e := apiError{Message: err.Error(), Type: "invalid_request_error"}
		if errors.Is(err, errNoModel) || errors.Is(err, errModelType) || errors.Is(err, errTwoModels) {
			e.Param = "model"
		}
		x.refuse(http.StatusBadRequest, e)
		return
	}
	// A body first translated is checked by the translator as it reads it
	// (and by json.Valid before any attempt that forwards it as it is).
	if x.in.unchecked = x.translatesFirst(); !x.in.unchecked && !json.Valid(body) {
		x.refuse(http.StatusBadRequest, apiError{Message: errNotJSON.Error(), Type: "invalid_request_error"})
		return
	}
	if x.route() {
		x.run(body)
	}
}

// begin takes the ticket of the request's next attempt, with the
// Observer's view of it if the gateway has one. A wire without verdicts
// (count_tokens) takes the routed model and settles nothing.
func (x *exchange) begin() (ticket, error) {
	if !x.in.endpoint.settles {
		return x.observe(ticket{model: x.in.rt.mgr.ActiveModel()}, x.walk.attempts+1, false), nil
	}
	t, err := x.in.rt.begin(&x.walk.att)
	if err != nil {
		return t, err
	}
	return x.observe(t, x.walk.attempts+1, false), nil
}

// settle records an attempt's verdict on its ticket and in the metrics.
func (x *exchange) settle(t ticket, o metrics.Outcome, k fallback.Kind) {
	x.settleFailure(t, o, fallback.Failure{Kind: k})
}

// settleFailure is settle with a failure's whole report (kind, hint, timeout).
func (x *exchange) settleFailure(t ticket, o metrics.Outcome, f fallback.Failure) {
	switch o {
	case metrics.Success:
		t.Success()
	case metrics.Failure:
		t.Fail(f)
	default:
		t.Cancel()
	}
	if x.in.endpoint.settles {
		x.g.m.call(x.in.rt.name, o)
	}
}

// run walks the request's attempt budget: each attempt goes where the model
// breaker routes it, through the retry ladder, on the request's wire, within
// the request's deadline; while another model is usable an attempt fails
// over rather than waits (SEMANTICS §7).
func (x *exchange) run(body []byte) {
	g, rt := x.g, x.in.rt
	var last error
	prev := ""
	stream := x.in.req.stream && x.in.endpoint.streams
	x.walk.deadline = deadlineContext{Context: x.r.Context(), deadline: g.deadline(x.r, x.in.start)}
	rctx := &x.walk.deadline
	if x.in.pin != nil {
		x.runPinned(rctx, body, stream)
		return
	}
	for x.walk.attempts < x.in.budget {
		if last != nil && rctx.ended() {
			break // no attempt starts after the deadline (§7.3)
		}
		tk, err := x.begin()
		if err != nil {
			if x.refusedTurn(err, last) {
				return
			}
			break
		}
		tg, next := x.pick(tk, body)
		if next == answered {
			return
		} else if next == stopped {
			break
		} else if next == passed {
			continue
		}
		if prev != "" && prev != tg.ref {
			g.m.fallback(rt.name, prev, tg.ref)
		}
		prev, x.walk.last = tg.ref, tg
		next, err = x.send(rctx, tk, tg, body, stream)
		if next == answered {
			return
		} else if next == failed {
			last = err
		}
		if tg.pool == nil {
			prev = x.walk.last.ref // a hedged race may have served on its rival
		}
	}
	if x.poolsUnavailable(last, time.Time{}) || x.unserved(last) {
		return
	}
	x.failLast(last)
}

// send sends the attempt of tk to its candidate tg, under the request's
// context rctx and the ticket's deadline, and concludes it: a pool
// attempt (pool_walk.go), a hedged race (hedge.go), or one attempt. It
// returns what conclude did, with the attempt's error.
func (x *exchange) send(rctx context.Context, tk ticket, tg *target, body []byte, stream bool) (int, error) {
	actx, acancel := x.attemptContext(rctx, tk)
	defer acancel() // a served stream is read under it until it ends
	if tg.pool != nil {
		return x.poolAttempt(actx, tk, tg, body, stream)
	}
	x.walk.attempts++
	var res *result
	var err error
	var t0 time.Time // the attempt's start: a timeout is dated at it (§8.4)
	if x.hedging() {
		o := x.race(actx, tk, tg, body, stream)
		defer o.cancel()
		tk, tg, res, err, t0 = o.tk, o.tg, o.res, o.err, o.started
		x.walk.last = tg
	} else {
		t0 = time.Now()
		res, err = x.attempt(actx, tk, tg, body, stream, x.otherUsable(tg.ref))
		x.walk.upstream += time.Since(t0)
	}
	return x.conclude(tk, tg, res, err, t0), err
}

// What pick and conclude did with an attempt.
const (
	answered = iota // the exchange is answered
	failed          // the attempt failed with a verdict: the next one
	passed          // the entry was routed past with no verdict: the next one
	stopped         // no model is left to try
	proceed         // pick: send the attempt
)

// pick returns the candidate of tk, or what to do instead: answer
// count_tokens locally for an entry that is not an anthropic upstream
// (§8.8), stop when every model left has failed this request slowly (its
// ladder has already waited what it could, SEMANTICS §7.1: a second try
// would only repeat the rate limit or the timeout) or cannot serve it
// (§8.3), or route embeddings past an entry that is not an openai
// upstream.
func (x *exchange) pick(tk ticket, body []byte) (*target, int) {
	tg := x.in.rt.targets[tk.Model()]
	if tg.pool != nil {
		return x.pickPool(tk, tg, body)
	}
	switch {
	case x.in.endpoint == countTokensEndpoint && (tg.up.api != APIAnthropic || tg.up.cloud != nil && !tg.up.cloud.countTokens):
		x.estimateTokens(body, tg)
		return nil, answered
	case x.walk.is(tg.ref, markSlow|markPassed):
		tk.Cancel()
		return nil, stopped
	case x.walk.is(tg.ref, markFailedEntry) && x.in.rt.mgr.State() == fallback.Primary:
		// A chain entry serving a request whose primary failed it slowly
		// counts nothing for the entry while the primary is closed, so
		// the breaker would hand it out again: a second failure of it
		// would only repeat the first. The request goes to the next entry.
		x.skip(tk, tg, "")
		return nil, passed
	case x.in.endpoint == embeddingsEndpoint && tg.up.api != APIOpenAI:
		x.skip(tk, tg, "")
		return nil, passed
	case x.walk.is(tg.ref, markFailed) && tg.up.authFailing.Load():
		// Its credentials could not be had: a second try of it within
		// this request would only repeat that (GATEWAY §10.1).
		x.skip(tk, tg, "")
		return nil, passed
	case x.retryRefused(tk, tg.ref):
		// Back to a model that failed this request: a same-model retry,
		// and the budget refuses it (SEMANTICS §8.3, retrybudget.go).
		x.skip(tk, tg, "")
		return nil, passed
	}
	return tg, proceed
}

// conclude settles an attempt's ticket tk on tg: it relays a served attempt (err
// nil), answers a client that went away, a local error or an upstream's
// 400, 413 or 422 (answered); routes past an entry that cannot serve the
// request or refused it translated (passed); or records the failure on the
// ticket (failed), for the next attempt. start is the attempt's start: a
// timeout reports how long it ran (SEMANTICS §8.4).
func (x *exchange) conclude(tk ticket, tg *target, res *result, err error, start time.Time) int {
	if err == nil {
		if x.refusal(res) {
			x.skip(tk, tg, "")
			x.out.refused = tg.ref
			res.release()
			return passed
		}
		x.relay(tk, tg, res)
		return answered
	}
	if x.halted() {
		x.haltAnswer(tk)
		return answered
	}
	if x.clientGone() {
		x.settle(tk, metrics.Cancel, 0)
		x.done(outcomeCancel, 499, "client went away")
		return answered
	}
	if x.local(tk, err) {
		return answered
	}
	if x.concludeTranslated(tk, tg, err) {
		return passed
	}
	var ue *upstreamError
	if errors.As(err, &ue) && (ue.status == 400 || ue.status == 413 || ue.status == 422) {
		x.passThrough(tk, ue, err)
		return answered
	}
	x.failedAttempt(tk, tg, err, start)
	if tg.ref != x.in.rt.settings.Primary {
		x.walk.set(tg.ref, markFailedEntry)
	}
	return failed
}

// failedAttempt settles a failed attempt on tg (started at start) with its
// verdict, on the ticket, the walk and the route.
func (x *exchange) failedAttempt(tk ticket, tg *target, err error, start time.Time) {
	f := failure(err, start)
	now := x.g.now()
	x.walk.failed(tg.ref, f, now)
	tk.seen.failed(err)
	x.in.rt.noteFailure(tg.ref, f, err, now)
	x.settleFailure(tk, metrics.Failure, f)
}

// attempt sends one attempt to tg through the retry ladder. With failover
// (another model is usable) the ladder fails over at once on a rate limit
// or a timeout rather than wait, and it never waits past the request's
// deadline (SEMANTICS §7.1). Each same-model retry of the ladder spends a
// token of the retry budget of tk's model (SEMANTICS §8.3). It may run on
// its own goroutine (hedging): it reads x.in, which nothing changes once
// the walk starts, and of the walk only the parts made to be shared (the
// body check, the retry refusals).
func (x *exchange) attempt(ctx context.Context, tk ticket, tg *target, body []byte, stream, failover bool) (*result, error) {
	pol := x.in.rt.policy
	pol.Failover = failover
	if failover && x.in.rt.settings.FailureRate > 0 {
		pol.MaxRetries = -1 // each try a verdict for the window (retrybudget.go)
	}
	pol.Budget = x.retryBudget(tk, tg.ref)
	return x.attemptWith(ctx, tk, tg, body, stream, pol)
}

// attemptWith is attempt through the ladder pol.
func (x *exchange) attemptWith(ctx context.Context, tk ticket, tg *target, body []byte, stream bool, pol retry.Policy) (*result, error) {
	g := x.g
	// A fresh buffer per attempt: a transport may still read the body of a
	// failed attempt after RoundTrip has returned.
	tr, w, err := tg.translate(x.in.endpoint, body)
	if err != nil {
		return nil, err
	}
	var payload []byte
	if tr != nil {
		payload = tr.Body
	} else if x.in.unchecked && !x.validBody(body) {
		return nil, &wire.RequestError{Message: errNotJSON.Error()}
	} else {
		payload = rewrite(make([]byte, 0, len(body)+len(tg.quoted)), body, x.in.req, tg.quoted)
	}
	if c := tg.up.cloud; c != nil {
		payload = c.body(payload, x.r.Header, w) // Bedrock's and Vertex's body rules (§10.2)
	}
	ctx = tk.seen.sent(ctx)
	return retry.Do(ctx, pol, func(ctx context.Context) (*result, error) {
		return g.send(ctx, tg, x.r, payload, stream, w, tr)
	})
}

// passThrough relays an upstream's 400, 413 or 422 unchanged: the request
// was bad, not the model, so there is no verdict.
func (x *exchange) passThrough(tk ticket, ue *upstreamError, err error) {
	x.settle(tk, metrics.Cancel, 0)
	x.headers(x.w.Header())
	copyHeader(x.w.Header(), ue.header)
	x.w.Header().Set("Content-Length", strconv.Itoa(len(ue.body)))
	x.w.WriteHeader(ue.status)
	_, _ = x.w.Write(ue.body)
	x.done(outcomePassthrough, ue.status, err.Error())
}

// relay relays a served attempt: a committed stream, or a whole answer.
func (x *exchange) relay(tk ticket, tg *target, res *result) {
	defer res.release()
	tk.seen.answered(res)
	x.g.m.firstByte(tg.ref, res.first)
	if res.tr != nil {
		x.out.translated, x.out.dropped = translatedLabel(res.tr), res.tr.Dropped
		x.g.m.translation(res.tr)
	} else if x.in.endpoint.pinned {
		id := ""
		if res.stream != nil {
			id = res.stream.id
		} else {
			id = responseID(res.body.Bytes())
		}
		x.g.pins.remember(x.r.Context(), id, tg.ref)
	}
	if res.stream != nil {
		x.pump(tk, res)
		return
	}
	x.settleSuccess(tk, res.content)
	x.writeResult(res)
	x.done(outcomeSuccess, res.resp.StatusCode, "")
}
