package gateway

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

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

// answerChunk is how much readAnswer reads at a time.
const answerChunk = 32 << 10

// readAnswer reads a non-streaming answer into buf, charging the buffer's
// capacity to g's budget as it grows; it returns what it charged (to be
// freed with the buffer) and a *localError when one answer or the whole
// gateway would hold more than allowed.
func (g *Gateway) readAnswer(buf *bytes.Buffer, body io.Reader, size int64) (int64, error) {
	limit := g.limits.maxResp
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
