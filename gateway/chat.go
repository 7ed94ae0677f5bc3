package gateway

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	loopmetrics "github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/retry"
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

// exchange is one client request in flight.
type exchange struct {
	g        *Gateway
	w        http.ResponseWriter
	r        *http.Request
	rt       *route
	req      request
	start    time.Time
	upstream time.Duration // time spent waiting on upstreams (the ladder included)
	attempts int
	served   string // upstream/model that served or failed last
	client   string
}

// chat serves POST /v1/chat/completions.
func (g *Gateway) chat(w http.ResponseWriter, r *http.Request) {
	x := exchange{g: g, w: w, r: r, start: time.Now()}
	name, ok := g.clientName(r)
	if !ok {
		x.refuse(http.StatusUnauthorized, apiError{Message: "missing or invalid API key (send Authorization: Bearer <key>)", Type: "authentication_error", Code: "invalid_api_key"})
		return
	}
	x.client = name
	if r.ContentLength > g.maxBody {
		x.refuse(http.StatusRequestEntityTooLarge, tooLarge(g.maxBody))
		return
	}
	buf := getBuf()
	defer putBuf(buf)
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, g.maxBody+1)); err != nil {
		x.refuse(http.StatusBadRequest, apiError{Message: "could not read the request body: " + err.Error(), Type: "invalid_request_error"})
		return
	}
	if int64(buf.Len()) > g.maxBody {
		x.refuse(http.StatusRequestEntityTooLarge, tooLarge(g.maxBody))
		return
	}
	body := buf.Bytes()
	req, err := scan(body)
	x.req = req
	if err != nil {
		e := apiError{Message: err.Error(), Type: "invalid_request_error"}
		if errors.Is(err, errNoModel) || errors.Is(err, errModelType) || errors.Is(err, errTwoModels) {
			e.Param = "model"
		}
		x.refuse(http.StatusBadRequest, e)
		return
	}
	x.req = req
	rt, err := g.lookup(req.model)
	if err != nil {
		x.refuseLocal(err)
		return
	}
	if rt == nil {
		x.refuse(http.StatusNotFound, apiError{Message: "The model `" + req.model + "` does not exist (see GET /v1/models)", Type: "invalid_request_error", Param: "model", Code: "model_not_found"})
		return
	}
	x.rt = rt
	x.run(body)
}

func tooLarge(limit int64) apiError {
	return apiError{Message: "the request body is larger than limits.max_body (" + strconv.FormatInt(limit, 10) + " bytes)", Type: "invalid_request_error", Code: "request_too_large"}
}

// refuse answers a request the gateway rejects before routing it.
func (x *exchange) refuse(status int, e apiError) {
	writeError(x.w, status, e)
	x.done(outcomeInvalid, status, e.Message)
}

// run walks the request's attempt budget: each attempt goes where the model
// breaker routes it, through the retry ladder.
func (x *exchange) run(body []byte) {
	g, rt := x.g, x.rt
	var last error
	prev := ""
	for x.attempts < rt.budget {
		turn, err := rt.begin()
		if err != nil {
			g.m.call(rt.name, loopmetrics.Refused)
			if x.attempts == 0 || last == nil {
				x.exhausted(err)
				return
			}
			break
		}
		x.attempts++
		tg := rt.targets[turn.Model()]
		if prev != "" && prev != tg.ref {
			g.m.fallback(rt.name, prev, tg.ref)
		}
		prev, x.served = tg.ref, tg.ref
		// A fresh buffer per attempt: a transport may still read the body
		// of a failed attempt after RoundTrip has returned.
		payload := rewrite(make([]byte, 0, len(body)+len(tg.quoted)), body, x.req, tg.quoted)

		ctx := x.r.Context()
		var cancel context.CancelFunc
		if dl, ok := turn.Deadline(); ok {
			// The probe's request never outlives its lease (SEMANTICS §3
			// rev 2); the lease end is on the breaker's clock.
			ctx, cancel = context.WithTimeout(ctx, dl.Sub(g.now()))
		}
		t0 := time.Now()
		res, err := retry.Do(ctx, rt.policy, func(ctx context.Context) (*result, error) {
			return g.send(ctx, tg, x.r, payload, x.req.stream)
		})
		x.upstream += time.Since(t0)
		if err == nil {
			g.m.firstByte(tg.ref, res.first)
			if res.stream != nil {
				x.pump(turn, res)
			} else {
				turn.Success()
				g.m.call(rt.name, loopmetrics.Success)
				x.writeResult(res)
				x.done(outcomeSuccess, res.resp.StatusCode, "")
			}
			res.release()
			if cancel != nil {
				cancel()
			}
			return
		}
		if cancel != nil {
			cancel()
		}
		if x.r.Context().Err() != nil {
			turn.Cancel()
			g.m.call(rt.name, loopmetrics.Cancel)
			x.done(outcomeCancel, 499, "client went away")
			return
		}
		if x.local(turn, err) {
			return
		}
		var ue *upstreamError
		if errors.As(err, &ue) && (ue.status == 400 || ue.status == 413 || ue.status == 422) {
			// The request was bad, not the model: no verdict, the answer
			// passes through unchanged.
			turn.Cancel()
			g.m.call(rt.name, loopmetrics.Cancel)
			x.headers(x.w.Header())
			copyHeader(x.w.Header(), ue.header)
			x.w.Header().Set("Content-Length", strconv.Itoa(len(ue.body)))
			x.w.WriteHeader(ue.status)
			_, _ = x.w.Write(ue.body)
			x.done(outcomePassthrough, ue.status, err.Error())
			return
		}
		if errors.Is(err, retry.ErrRateLimitEscalation) {
			turn.Failure(fallback.RateLimit)
		} else {
			turn.Failure(fallback.Transient)
		}
		g.m.call(rt.name, loopmetrics.Failure)
		last = err
	}
	x.fail(last)
}

// headers sets the gateway's own response headers.
func (x *exchange) headers(h http.Header) {
	if x.served != "" {
		h["X-Loopctl-Model"] = []string{x.served}
	}
	h["X-Loopctl-Attempts"] = []string{strconv.Itoa(x.attempts)}
}

func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		if !hopHeaders[k] {
			dst[k] = vs
		}
	}
}

// writeResult writes a non-streaming answer.
func (x *exchange) writeResult(res *result) {
	h := x.w.Header()
	copyHeader(h, res.resp.Header)
	x.headers(h)
	h["Content-Length"] = []string{strconv.Itoa(res.body.Len())}
	x.w.WriteHeader(res.resp.StatusCode)
	_, _ = x.w.Write(res.body.Bytes())
}

// exhausted answers FallbackExhausted: 503 with Retry-After.
func (x *exchange) exhausted(err error) {
	var ee *fallback.ExhaustedError
	wait := time.Second
	if errors.As(err, &ee) {
		wait = ee.RetryIn
	}
	x.headers(x.w.Header())
	x.w.Header().Set("Retry-After", ceilSeconds(int64(wait)))
	e := apiError{Message: err.Error(), Type: "fallback_exhausted", Code: "fallback_exhausted"}
	writeError(x.w, http.StatusServiceUnavailable, e)
	x.done(outcomeExhausted, http.StatusServiceUnavailable, e.Message)
}

// fail answers a request no model could serve.
func (x *exchange) fail(err error) {
	x.headers(x.w.Header())
	status, e := http.StatusBadGateway, apiError{Message: "no model could serve the request; last error: " + err.Error(), Type: "upstream_error"}
	outcome := outcomeFailure
	var ue *upstreamError
	var esc *retry.EscalationError
	switch {
	case errors.As(err, &esc):
		status, e.Type, outcome = http.StatusTooManyRequests, "rate_limit_error", outcomeRateLimit
		e.Code = "rate_limit_exceeded"
		wait := esc.RetryAfter
		if wait <= 0 {
			wait = 5 * time.Second
		}
		x.w.Header().Set("Retry-After", ceilSeconds(int64(wait)))
	case errors.As(err, &ue) && (ue.status == 401 || ue.status == 403):
		e.Type = "upstream_auth_error"
	case errors.As(err, &ue) && ue.status == 404:
		e.Type = "upstream_model_not_found"
	}
	writeError(x.w, status, e)
	x.done(outcome, status, e.Message)
}

// done records the request: metrics and one log line.
func (x *exchange) done(outcome string, status int, msg string) {
	total := time.Since(x.start)
	model := ""
	if x.rt != nil {
		model = x.rt.name
	}
	x.g.m.request(model, x.served, outcome, total-x.upstream)
	if x.g.log == nil {
		return
	}
	if model == "" {
		model = logName(x.req.model) // refused before routing: the name it gave (never a metric label)
	}
	level := slog.LevelInfo
	if outcome != outcomeSuccess && outcome != outcomeCancel {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("model", model),
		slog.String("served", x.served),
		slog.Int("attempts", x.attempts),
		slog.Int("status", status),
		slog.String("outcome", outcome),
		slog.Bool("stream", x.req.stream),
		slog.Duration("duration", total),
	}
	if x.client != "" {
		attrs = append(attrs, slog.String("client", x.client))
	}
	if msg != "" && outcome != outcomeSuccess {
		attrs = append(attrs, slog.String("error", msg))
	}
	x.g.log.LogAttrs(x.r.Context(), level, "request", attrs...)
}
