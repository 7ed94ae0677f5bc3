package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/retry"
)

// pump sends a committed stream to the client, event by event, each one
// flushed as it arrives. The ticket is settled by how the stream ends: its
// wire's end marker ([DONE], message_stop, response.completed) is a
// success; a break (cut, reset, a body that ends without the end marker, a
// malformed event, an upstream error event, timeouts.request) is a failure
// of the model that served it, reported to the client as the wire's error
// event; a client that goes away cancels the upstream request and settles
// nothing (a cancellation).
func (x *exchange) pump(tk ticket, res *result) {
	st := res.stream
	x.out.respID = st.id
	if st.tc != nil {
		x.out.respID = st.tc.ResponseID()
	}
	x.settleSlowProbe(tk, res.content)
	x.streamHeaders(res.resp.Header)
	rc := http.NewResponseController(x.w)
	t0 := time.Now()
	defer func() { x.walk.upstream += time.Since(t0) }()

	if !x.writeFlush(rc, st.held.Bytes()) {
		x.streamCancelled(tk, res)
		return
	}
	st.held.Reset() // its room serves the translated events
	for !st.done {
		if !x.pumpEvent(tk, res, rc) {
			return
		}
	}
	x.settleSuccess(tk, res.content)
	x.done(outcomeSuccess, http.StatusOK, "")
}

// pumpEvent reads the stream's next event and relays it to the client,
// marking the stream done at its end marker; false when the stream broke
// or the client went away (the exchange is then answered and settled).
func (x *exchange) pumpEvent(tk ticket, res *result, rc *http.ResponseController) bool {
	st := res.stream
	ev, err := st.next()
	if err == io.EOF {
		err = fmt.Errorf("%w: the stream ended without its end marker", errCut)
	}
	if err != nil {
		if x.halted() {
			x.haltStream(tk, res)
			return false
		}
		if x.clientGone() {
			x.streamCancelled(tk, res)
			return false
		}
		if errors.Is(context.Cause(res.ctx), errRequestTimeout) {
			err = errRequestTimeout
		}
		x.broken(tk, err, nil)
		return false
	}
	info, err := wire.After(st.wire.wire, ev)
	if err != nil {
		x.broken(tk, err, nil)
		return false
	}
	if st.tc != nil {
		return x.pumpTranslated(tk, res, rc, ev, info)
	}
	if info.ID != "" && x.out.respID == "" {
		x.out.respID = info.ID
	}
	if !x.writeFlush(rc, ev) {
		x.streamCancelled(tk, res)
		return false
	}
	if info.Kind == wire.EventError {
		// The upstream's own error event reached the client as is.
		x.broken(tk, &streamError{payload: string(wire.Data(ev)), typ: info.ErrType}, ev)
		return false
	}
	st.done = info.Kind == wire.EventEnd
	return true
}

// pumpTranslated relays one event of a translated stream: its translation
// into the client's wire; an upstream error event is not relayed (the
// client gets its own wire's error event).
func (x *exchange) pumpTranslated(tk ticket, res *result, rc *http.ResponseController, ev []byte, info wire.EventInfo) bool {
	st := res.stream
	if info.Kind == wire.EventError {
		x.broken(tk, &streamError{payload: string(wire.Data(ev)), typ: info.ErrType}, nil)
		return false
	}
	out, err := st.tc.Event(st.held.AvailableBuffer()[:0], ev)
	if err != nil {
		x.broken(tk, err, nil)
		return false
	}
	if len(out) > 0 && !x.writeFlush(rc, out) {
		x.streamCancelled(tk, res)
		return false
	}
	st.done = info.Kind == wire.EventEnd
	return true
}

// writeFlush writes b to the client and flushes it; false when either
// fails (the client went away).
func (x *exchange) writeFlush(rc *http.ResponseController, b []byte) bool {
	if _, err := x.w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// streamCancelled ends a stream whose client went away: it cancels the
// upstream request and settles the ticket as a cancellation.
func (x *exchange) streamCancelled(tk ticket, res *result) {
	res.cancel(errClientGone)
	x.settle(tk, metrics.Cancel, 0)
	x.done(outcomeCancel, 499, "client went away")
}

// streamHeaders writes the headers of a committed stream.
func (x *exchange) streamHeaders(up http.Header) {
	h := x.w.Header()
	copyHeader(h, up)
	x.headers(h)
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	x.w.WriteHeader(http.StatusOK)
}

var errClientGone = errors.New("client went away")

// broken ends a stream that broke after its first content: the wire's error
// event (after the upstream's own, when it sent one: forwarded), and a
// failure of the model that served it.
func (x *exchange) broken(tk ticket, err error, forwarded []byte) {
	kind := fallback.Transient
	if lim, _ := retry.LimitOf(streamLimit(err)); lim != retry.NoLimit {
		kind = fallback.RateLimit
	}
	x.settle(tk, metrics.Failure, kind)
	x.in.rt.noteFailure(tk.Model(), fallback.Failure{Kind: kind}, err, x.g.now())
	final := forwarded != nil && bytes.Contains(forwarded, []byte("response.failed"))
	if !final {
		if ev := wire.Broken(x.in.endpoint.wire, "the upstream stream broke: "+err.Error(), x.out.respID, forwarded != nil); len(ev) > 0 {
			_, _ = x.w.Write(ev)
			_ = http.NewResponseController(x.w).Flush()
		}
	}
	x.done(outcomeStreamError, http.StatusOK, err.Error())
}
