package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	loopmetrics "github.com/loopctl/loopctl-go/metrics"
)

// pump sends a committed stream to the client, event by event, each one
// flushed as it arrives. The turn is settled by how the stream ends: its
// end ([DONE] or the body's clean end) is a success; a break (cut, reset,
// malformed event, an upstream error event, timeouts.request) is a failure
// of the model that served it, reported to the client as an error event
// with no [DONE]; a client that goes away cancels the upstream request and
// settles nothing (a cancellation).
func (x *exchange) pump(turn ticket, res *result) {
	g, rt, st := x.g, x.rt, res.stream
	h := x.w.Header()
	copyHeader(h, res.resp.Header)
	x.headers(h)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	x.w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(x.w)
	t0 := time.Now()
	defer func() { x.upstream += time.Since(t0) }()

	wrote := func(b []byte) bool {
		if _, err := x.w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	cancelled := func() {
		res.cancel(errClientGone)
		turn.Cancel()
		g.m.call(rt.name, loopmetrics.Cancel)
		x.done(outcomeCancel, 499, "client went away")
	}
	if !wrote(st.held.Bytes()) {
		cancelled()
		return
	}
	if st.done {
		turn.Success()
		g.m.call(rt.name, loopmetrics.Success)
		x.done(outcomeSuccess, http.StatusOK, "")
		return
	}
	for {
		ev, err := st.next()
		if err == io.EOF {
			turn.Success()
			g.m.call(rt.name, loopmetrics.Success)
			x.done(outcomeSuccess, http.StatusOK, "")
			return
		}
		if err != nil {
			if x.r.Context().Err() != nil {
				cancelled()
				return
			}
			if errors.Is(context.Cause(res.ctx), errRequestTimeout) {
				err = errRequestTimeout
			}
			x.broken(turn, err, nil)
			return
		}
		k := kindContent
		if d := data(ev); len(d) > 0 && (d[0] != '{' || string(d) == "[DONE]" || hasError(d)) {
			if k, err = classify(ev); err != nil {
				x.broken(turn, err, nil)
				return
			}
		}
		if k == kindError {
			// The upstream's own error event reaches the client as is.
			if !wrote(ev) {
				cancelled()
				return
			}
			x.broken(turn, &streamError{payload: string(data(ev))}, ev)
			return
		}
		if !wrote(ev) {
			cancelled()
			return
		}
		if k == kindDone {
			turn.Success()
			g.m.call(rt.name, loopmetrics.Success)
			x.done(outcomeSuccess, http.StatusOK, "")
			return
		}
	}
}

// hasError reports whether a data payload is an error object, cheaply: the
// chunks of a healthy stream start with {"id" or {"choices".
func hasError(d []byte) bool {
	return len(d) > 9 && string(d[:9]) == `{"error":` || !jsonValid(d)
}

var errClientGone = errors.New("client went away")

// broken ends a stream that broke after the first content chunk: an error
// event in the OpenAI shape (unless the upstream sent its own, already
// forwarded), no [DONE], and a failure of the model that served it.
func (x *exchange) broken(turn ticket, err error, forwarded []byte) {
	turn.Failure(fallback.Transient)
	x.g.m.call(x.rt.name, loopmetrics.Failure)
	if forwarded == nil {
		b, _ := json.Marshal(struct {
			Error apiError `json:"error"`
		}{apiError{Message: "the upstream stream broke: " + err.Error(), Type: "upstream_error", Code: "stream_interrupted"}})
		_, _ = x.w.Write([]byte("data: "))
		_, _ = x.w.Write(b)
		_, _ = x.w.Write([]byte("\n\n"))
		_ = http.NewResponseController(x.w).Flush()
	}
	x.done(outcomeStreamError, http.StatusOK, err.Error())
}
