package gateway

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/retry"
)

// Chains across wires (docs/GATEWAY.md §8): a model is served on the three
// client wires whatever its entries' wires. A request whose client wire the
// routed entry speaks goes on the fast path unchanged but "model"; any
// other is translated (package gateway/internal/wire) into a wire the entry
// speaks, and its answer or stream back into the client's.

// clientWires are the client wires translation serves, by wire.API.
var clientWires = [...]*endpoint{wire.Chat: chatEndpoint, wire.Responses: responsesEndpoint, wire.Messages: messagesEndpoint}

// setWires sets what upstream u speaks and how translated requests reach it,
// from its config c (validated).
func (u *upstream) setWires(c Upstream) {
	if u.api == APIAnthropic {
		u.speaks[wire.Messages] = true
		u.to = messagesEndpoint
		u.target = wire.Target{API: wire.Messages, Family: true, DefaultMaxTokens: c.DefaultMaxTokens}
		return
	}
	wires := c.Wires
	if wires == nil {
		wires = []string{"chat", "responses"}
	}
	for _, w := range wires {
		u.speaks[apiOf(w)] = true
	}
	to := c.Translate.To
	if to == "" {
		to = wires[0]
		if u.speaks[wire.Chat] {
			to = "chat"
		}
	}
	u.to = clientWires[apiOf(to)]
	u.target = wire.Target{API: apiOf(to), MaxTokensField: c.Translate.MaxTokensField, StreamUsage: !c.Translate.NoStreamUsage}
}

// apiOf returns the wire.API of a wire's config name (chat, responses).
func apiOf(name string) wire.API {
	if name == "responses" {
		return wire.Responses
	}
	return wire.Chat
}

// wireFor returns the wire a request of the client wire w is sent to u on:
// w itself when u speaks it (or w is not a translated wire: embeddings,
// count_tokens), else the wire it is translated into.
func (u *upstream) wireFor(w *endpoint) *endpoint {
	if !w.translated || u.speaks[w.wire] {
		return w
	}
	return u.to
}

// translate translates the client's body (wire w) for target tg; nil when
// tg's upstream speaks w. The error is a *wire.UnsupportedError (the entry
// is skipped) or a *wire.RequestError (the client's request is bad).
func (tg *target) translate(w *endpoint, body []byte) (*wire.Translation, *endpoint, error) {
	to := tg.up.wireFor(w)
	if to == w {
		return nil, w, nil
	}
	t := tg.up.target
	t.API, t.Model = to.wire, tg.model
	tr, err := wire.Translate(w.wire, body, t)
	return tr, to, err
}

// translatedLabel is the x-loopctl-translated value and log field of a
// translation: <client wire>-><upstream wire>.
func translatedLabel(tr *wire.Translation) string {
	return tr.From.String() + "->" + tr.To.API.String()
}

// skip ends an attempt whose entry cannot serve the request (§8.3) or
// refused it as a translated request (a 400, 413 or 422 of a backup on
// another wire, §8.6): no verdict, and the request routes past it.
func (x *exchange) skip(tk ticket, tg *target, param string) {
	tk.Skip()
	x.g.m.call(x.in.rt.name, metrics.Cancel)
	x.walk.pass(tg, param)
}

// concludeTranslated handles the failures of an attempt that only a
// translated entry has: the request cannot be expressed on its wire, or
// does not decode for translation (skipped: no upstream request, no
// verdict), or the entry refused the request (400, 413, 422: no verdict,
// the next entry). It reports whether err was one of them.
func (x *exchange) concludeTranslated(tk ticket, tg *target, err error) bool {
	var ue *wire.UnsupportedError
	var re *wire.RequestError
	var up *upstreamError
	switch {
	case errors.As(err, &ue):
		x.walk.attempts-- // no upstream request was made
		x.skip(tk, tg, ue.Field)
		return true
	case errors.As(err, &re):
		// The request does not decode for translation: this entry cannot
		// serve it, but an entry on the client's own wire still may.
		x.walk.attempts--
		if x.walk.skips.why == "" && x.walk.skips.param == "" {
			x.walk.skips.why = re.Message
		}
		x.skip(tk, tg, cmp.Or(re.Param, "the request"))
		return true
	case errors.As(err, &up) && (up.status == 400 || up.status == 413 || up.status == 422) && tg.up.wireFor(x.in.endpoint) != x.in.endpoint:
		x.skip(tk, tg, "")
		x.walk.skips.rejected = up
		return true
	}
	return false
}

// commitError is the failure of a stream that broke before its commit
// point (ref: the upstream/model that sent it). A translated stream's error event saying
// the request did not fit the entry's context window (a Responses
// response.failed with context_length_exceeded, say) is the 400 the entry
// would have answered it with (§8.6): no verdict, the next entry, and when
// none serves the client's own wire's overflow error. A rate limit or an
// overload stays one.
func commitError(err error, tr *wire.Translation, ref string, now time.Time) error {
	err = streamLimit(fmt.Errorf("%w (%s)", err, ref))
	var se *streamError
	var limited *retry.StatusError
	if tr != nil && !errors.As(err, &limited) && errors.As(err, &se) && wire.ContextOverflow([]byte(se.payload)) {
		return statusError(&upstreamError{status: http.StatusBadRequest, body: []byte(se.payload)}, now)
	}
	return err
}

// nullable is s, or nil (JSON null) when s is empty.
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// unserved answers a request no entry served with the last translated
// entry's rejection, in the client's wire's shape (a context overflow in
// the form the client's tools act on), or, when no entry failed it either
// (last is nil), 400 naming the parameter no entry could express. It
// reports false when neither applies.
func (x *exchange) unserved(last error) bool {
	if ue := x.walk.skips.rejected; ue != nil {
		x.headers(x.w.Header())
		if wire.ContextOverflow(ue.body) {
			x.writeBody(http.StatusBadRequest, wire.OverflowBody(x.in.endpoint.wire))
			x.done(outcomePassthrough, http.StatusBadRequest, ue.Error())
			return true
		}
		typ, code, msg := wire.ErrorMessage(ue.body)
		x.writeBody(ue.status, wire.ErrorBody(x.in.endpoint.wire, ue.status, typ, code, msg))
		x.done(outcomePassthrough, ue.status, ue.Error())
		return true
	}
	if x.walk.skips.param != "" && last == nil {
		x.headers(x.w.Header())
		msg := "no entry of model `" + x.in.rt.name + "` can serve this request: its wires cannot express " + x.walk.skips.param
		if x.walk.skips.why != "" {
			msg = x.walk.skips.why
		}
		x.in.endpoint.writeError(x.w, http.StatusBadRequest, apiError{Message: msg, Type: "invalid_request_error", Param: x.walk.skips.param})
		x.done(outcomeInvalid, http.StatusBadRequest, msg)
		return true
	}
	return false
}

// writeBody writes a JSON error body with status.
func (x *exchange) writeBody(status int, b []byte) {
	h := x.w.Header()
	h.Set("Content-Type", "application/json")
	h.Del("Content-Length")
	x.w.WriteHeader(status)
	_, _ = x.w.Write(b)
}

// translationHeaders sets the headers of a translated answer and of the
// entries the request skipped or dropped parameters for (§8.3, §8.8).
func (x *exchange) translationHeaders(h http.Header) {
	if x.out.translated != "" {
		h.Set("X-Loopctl-Translated", x.out.translated)
	}
	if len(x.out.dropped) > 0 {
		h.Set("X-Loopctl-Dropped", strings.Join(x.out.dropped, ","))
	}
	if len(x.walk.skips.list) > 0 {
		h.Set("X-Loopctl-Skipped", strings.Join(x.walk.skips.list, ","))
	}
	if x.out.refused != "" {
		h.Set("X-Loopctl-Refused", x.out.refused)
	}
}

// translatesFirst reports whether the request's model is a configured one
// whose active entry is on another wire than the client's: its first
// attempt is translated.
func (x *exchange) translatesFirst() bool {
	rt := x.g.models[x.in.req.model]
	if rt == nil || !x.in.endpoint.translated {
		return false
	}
	tg := rt.targets[rt.mgr.ActiveModel()]
	if tg != nil && tg.pool != nil {
		for _, m := range tg.pool.members {
			if m.up.wireFor(x.in.endpoint) != x.in.endpoint {
				return true
			}
		}
		return false
	}
	return tg != nil && tg.up.wireFor(x.in.endpoint) != x.in.endpoint
}

// validBody reports whether body, a body first translated, is valid JSON
// before an attempt forwards it as it is: json.Valid runs once per request.
func (x *exchange) validBody(body []byte) bool {
	return x.walk.check.ok(body)
}
