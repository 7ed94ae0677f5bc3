package gateway

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/retry"
)

// headers sets the gateway's own response headers.
func (x *exchange) headers(h http.Header) {
	if tg := x.walk.last; tg != nil {
		h["X-Loopctl-Model"] = tg.hdr
	}
	if x.out.translated != "" || x.walk.skips.list != nil || x.out.refused != "" {
		x.translationHeaders(h)
	}
	if n := x.walk.tried(); n >= 0 && n < len(attemptsHdr) {
		h["X-Loopctl-Attempts"] = attemptsHdr[n]
	} else {
		h["X-Loopctl-Attempts"] = []string{strconv.Itoa(n)}
	}
}

// attemptsHdr are the usual values of x-loopctl-attempts (shared).
var attemptsHdr = func() (v [16][]string) {
	for i := range v {
		v[i] = []string{strconv.Itoa(i)}
	}
	return v
}()

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
	x.out.length[0] = strconv.Itoa(res.body.Len())
	h["Content-Length"] = x.out.length[:]
	x.w.WriteHeader(res.resp.StatusCode)
	_, _ = x.w.Write(res.body.Bytes())
}

// exhausted answers FallbackExhausted: 503 fallback_exhausted (Messages:
// 529 overloaded_error) with Retry-After and retry-after-ms.
func (x *exchange) exhausted(err error) {
	var ee *fallback.ExhaustedError
	wait := time.Second
	if errors.As(err, &ee) {
		wait = ee.RetryIn
	}
	x.headers(x.w.Header())
	retryHeaders(x.w.Header(), int64(wait))
	status := http.StatusServiceUnavailable
	if x.in.endpoint.wire == wire.Messages {
		status = 529
	}
	e := apiError{Message: err.Error(), Type: "fallback_exhausted", Code: "fallback_exhausted"}
	x.in.endpoint.writeError(x.w, status, e)
	x.done(outcomeExhausted, status, e.Message)
}

// refuseOpen refuses, before any request is sent, a request to a direct
// upstream/model route (or pinned to one by previous_response_id) while
// that model's breaker is open: the route has no chain to fail over to, so
// the request is answered at once with Retry-After until the model may be
// probed, as an exhausted chain is (GATEWAY.md §3, §6).
func (x *exchange) refuseOpen() bool {
	if !x.in.rt.direct || !x.in.endpoint.settles {
		return false
	}
	s := x.in.rt.mgr.Snapshot()
	now := x.g.now()
	if s.State != fallback.Fallback || !now.Before(s.CooldownEnds) {
		return false
	}
	ee := &fallback.ExhaustedError{Primary: x.in.rt.settings.Primary, State: s.State,
		ProbeAt: s.CooldownEnds, RetryIn: s.CooldownEnds.Sub(now)}
	if x.byOperator(ee, nil) {
		return true
	}
	x.g.m.call(x.in.rt.name, metrics.Refused)
	x.exhausted(ee)
	return true
}

// limitOf tells whether err (an attempt's failure) was rate-limited, of
// which kind, and how long the upstream asked to wait (0: no hint): the
// retry ladder's classifier (retry.LimitOf), the one the breaker's verdict
// uses too, so that the client's answer and the verdict never disagree.
func limitOf(err error, now time.Time) (retry.Limit, time.Duration) {
	lim, hint := retry.LimitOf(streamLimit(err))
	if lim == retry.NoLimit || hint.IsZero() {
		return lim, 0
	}
	return lim, max(hint.Sub(now), 0)
}

// fail answers a request no model could serve: 502 upstream_error, or when
// the last failure was rate-limited 429 rate_limit_error (Messages: 529
// overloaded_error for an overload), with Retry-After and retry-after-ms.
func (x *exchange) fail(err error) {
	x.failAs(err, "no model could serve the request; last error: "+clientText(err))
}

// failAs is fail with the message msg.
func (x *exchange) failAs(err error, msg string) {
	h := x.w.Header()
	x.headers(h)
	status, e := http.StatusBadGateway, apiError{Message: msg, Type: "upstream_error"}
	outcome := outcomeFailure
	var ue *upstreamError
	lim, wait := limitOf(err, x.g.now())
	switch {
	case lim == retry.Overload && x.in.endpoint.wire == wire.Messages:
		status, outcome = 529, outcomeRateLimit
	case lim != retry.NoLimit:
		status, e.Type, outcome = http.StatusTooManyRequests, "rate_limit_error", outcomeRateLimit
		e.Code = "rate_limit_exceeded"
		if lim == retry.Quota {
			e.Code = "insufficient_quota"
		}
	case errors.As(err, &ue) && (ue.status == 401 || ue.status == 403):
		e.Type = "upstream_auth_error"
	case errors.As(err, &ue) && ue.status == 404:
		e.Type = "upstream_model_not_found"
	}
	// Retry-After: the earliest time any model of the chain may serve (its
	// hint, or the breaker's cooldown end), SEMANTICS §7.3.
	if w := x.retryWait(x.g.now(), lim != retry.NoLimit); w > 0 {
		wait = w
		if lim == retry.NoLimit {
			retryHeaders(h, int64(wait))
		}
	}
	if lim != retry.NoLimit {
		if wait <= 0 {
			wait = 5 * time.Second
		}
		retryHeaders(h, int64(wait))
	}
	x.in.endpoint.writeError(x.w, status, e)
	x.done(outcome, status, e.Message)
}

// done records the request: metrics and one log line.
func (x *exchange) done(outcome string, status int, msg string) {
	total := time.Since(x.in.start)
	model := ""
	if x.in.rt != nil {
		model = x.in.rt.name
	}
	x.g.m.request(x.in.endpoint.label, model, x.walk.servedBy(), outcome, total-x.walk.upstream)
	if model == "" {
		model = logName(x.in.req.model) // refused before routing: the name it gave (never a metric label)
	}
	if obs := x.g.opt.Observer; obs != nil {
		e := RequestEnd{API: x.in.endpoint.label, Model: model, Served: x.walk.servedBy(), Attempts: x.walk.tried(), Status: status,
			Outcome: outcome, Stream: x.in.req.stream, Client: x.in.client, Translated: x.out.translated}
		if outcome != outcomeSuccess {
			e.Error = msg
		}
		obs.EndRequest(x.r.Context(), e)
	}
	if x.g.log == nil {
		return
	}
	level := slog.LevelInfo
	if outcome != outcomeSuccess && outcome != outcomeCancel {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("api", x.in.endpoint.label),
		slog.String("model", model),
		slog.String("served", x.walk.servedBy()),
		slog.Int("attempts", x.walk.tried()),
		slog.Int("status", status),
		slog.String("outcome", outcome),
		slog.Bool("stream", x.in.req.stream),
		slog.Duration("duration", total),
	}
	if x.in.client != "" {
		attrs = append(attrs, slog.String("client", x.in.client))
	}
	if x.out.translated != "" {
		attrs = append(attrs, slog.String("translated", x.out.translated))
	}
	if msg != "" && outcome != outcomeSuccess {
		attrs = append(attrs, slog.String("error", msg))
	}
	x.g.log.LogAttrs(x.r.Context(), level, "request", attrs...)
}

// responseID returns a Responses API answer's id ("" when it has none).
func responseID(body []byte) string {
	var r struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &r)
	return r.ID
}

// logName returns a client's model name as it may appear in a log: at most
// MaxModelName bytes, with every byte that is not printable ASCII escaped.
func logName(s string) string {
	if validModelName(s) {
		return s
	}
	if len(s) > MaxModelName {
		s = s[:MaxModelName] + "..."
	}
	q := strconv.QuoteToASCII(s)
	return q[1 : len(q)-1]
}
