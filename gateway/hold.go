package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/metrics"
)

// localError is an attempt that failed on the gateway's side, not the
// model's: it carries no verdict against the model (the turn is cancelled),
// is not retried, and the client gets status with e.
type localError struct {
	status int
	e      apiError
	retry  time.Duration // > 0: sent as Retry-After
}

func (e *localError) Error() string { return e.e.Message }

// local answers an attempt that failed with a *localError and reports true;
// it reports false for every other error.
func (x *exchange) local(turn ticket, err error) bool {
	var le *localError
	if !errors.As(err, &le) {
		return false
	}
	turn.Cancel()
	x.g.m.call(x.rt.name, metrics.Cancel)
	h := x.w.Header()
	x.headers(h)
	if le.retry > 0 {
		h.Set("Retry-After", ceilSeconds(int64(le.retry)))
	}
	x.endpoint.writeError(x.w, le.status, le.e)
	x.done(outcomeLocal, le.status, le.e.Message)
	return true
}

// outcomeLocal: an attempt failed on the gateway's side (a limit of its
// own), with no verdict against the model.
const outcomeLocal = "gateway_limit"

// held accounts the bytes of upstream answers and client request bodies
// the gateway holds at once (limits.max_response per answer,
// limits.max_body per body, [ResponseBudgetFactor] × the larger of the two
// in all).
type held struct {
	n     atomic.Int64
	limit int64
}

// reserve takes n bytes from the budget; false (nothing taken) when they
// do not fit.
func (h *held) reserve(n int64) bool {
	if h.n.Add(n) > h.limit {
		h.n.Add(-n)
		return false
	}
	return true
}

func (h *held) free(n int64) { h.n.Add(-n) }

// ResponseBudgetFactor is how many answers of limits.max_response (or
// bodies of limits.max_body, if larger) the whole gateway holds at once,
// client request bodies included: beyond that, an answer or a request is
// refused with 503 gateway_busy and Retry-After (no verdict against the
// model) rather than held.
const ResponseBudgetFactor = 4

func tooLargeAnswer(limit int64) *localError {
	return &localError{status: http.StatusBadGateway, e: apiError{
		Message: "the upstream's answer is larger than limits.max_response (" + strconv.FormatInt(limit, 10) + " bytes); ask for a shorter answer or stream it",
		Type:    "upstream_error", Code: "response_too_large"}}
}

var errGatewayFull = &localError{status: http.StatusServiceUnavailable, retry: time.Second, e: apiError{
	Message: "the gateway holds as many upstream answers and request bodies as limits.max_response allows; try again shortly",
	Type:    "server_error", Code: "gateway_busy"}}

// shapeMismatch: the upstream answered a stream to a request that did not
// ask for one (the request was read differently, not the model's failure).
var shapeMismatch = &localError{status: http.StatusBadGateway, e: apiError{
	Message: "the upstream answered a stream to a request without \"stream\": true",
	Type:    "upstream_error", Code: "unexpected_stream"}}

// answerChunk is how much readAnswer reads at a time.
const answerChunk = 32 << 10

// readAnswer reads a non-streaming answer into buf, charging the buffer's
// capacity to g's budget as it grows; it returns what it charged (to be
// freed with the buffer) and a *localError when one answer or the whole
// gateway would hold more than allowed.
func (g *Gateway) readAnswer(buf *bytes.Buffer, body io.Reader, size int64) (int64, error) {
	limit := g.maxResp
	if size > limit {
		return 0, tooLargeAnswer(limit)
	}
	if int64(buf.Cap()) > limit+answerChunk {
		// A pooled buffer grown by a larger body than any answer may be:
		// charging its capacity would refuse this answer for nothing.
		*buf = bytes.Buffer{}
	}
	charged := int64(buf.Cap())
	if !g.held.reserve(charged) {
		return 0, errGatewayFull
	}
	const chunk = answerChunk
	for {
		if buf.Available() < chunk {
			want := max(int64(buf.Cap())*2, 64<<10)
			if size > 0 {
				want = max(int64(buf.Len())+chunk, size+chunk)
			}
			want = min(want, limit+chunk)
			if want > charged {
				if !g.held.reserve(want - charged) {
					return charged, errGatewayFull
				}
				charged = want
			}
			buf.Grow(int(want) - buf.Len())
			if c := int64(buf.Cap()); c > charged { // Grow may round up
				g.held.n.Add(c - charged)
				charged = c
			}
		}
		n, err := body.Read(buf.AvailableBuffer()[:min(buf.Available(), chunk)])
		buf.Write(buf.AvailableBuffer()[:n]) // no copy: the bytes are already in place
		if int64(buf.Len()) > limit {
			return charged, tooLargeAnswer(limit)
		}
		if err == io.EOF {
			return charged, nil
		}
		if err != nil {
			return charged, err
		}
	}
}

var errIdle = errors.New("upstream sent nothing for timeouts.idle")

// errorInfo returns what the gateway repeats of an upstream's error body:
// its error type and code (OpenAI or Anthropic shape), as " (type T, code
// C)", each only when it is a short printable token; never the message,
// which may echo anything (keys included).
func errorInfo(body []byte) string {
	var e struct {
		Type  any `json:"type"`
		Error struct {
			Type any `json:"type"`
			Code any `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &e) != nil {
		return ""
	}
	s := ""
	if t := token(e.Error.Type); t != "" {
		s = "type " + t
	}
	if c := token(e.Error.Code); c != "" {
		if s != "" {
			s += ", "
		}
		s += "code " + c
	}
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// token returns v as text when it is a short string or number of
// identifier characters, else "".
func token(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return ""
	}
	if s == "" || len(s) > 64 {
		return ""
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return ""
		}
	}
	return s
}

// redactURLError drops the query and credentials of the URL in a
// connection error (the upstream's URL is the gateway's own business).
func redactURLError(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if u, perr := url.Parse(ue.URL); perr == nil {
		u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
		ue.URL = u.String()
	} else {
		ue.URL = "(upstream URL)"
	}
	return err
}

// refuseLocal answers a request refused before routing with a
// *localError's status, Retry-After and error.
func (x *exchange) refuseLocal(err error) {
	le := err.(*localError)
	if le.retry > 0 {
		x.w.Header().Set("Retry-After", ceilSeconds(int64(le.retry)))
	}
	x.refuse(le.status, le.e)
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
