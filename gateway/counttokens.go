package gateway

import (
	"bytes"
	"net/http"
	"strconv"
)

// count_tokens for a model whose routed entry is not an anthropic upstream:
// the gateway estimates it rather than fail a request no entry can answer
// (docs/GATEWAY.md §8.8).

// estimateTokens answers POST /v1/messages/count_tokens for a model whose
// routed entry tg is not an anthropic upstream: 200 {"input_tokens": N}
// estimated locally (one token per 4 bytes of the request's JSON, at least
// 1), with x-loopctl-estimate: true. No upstream request, no verdict.
func (x *exchange) estimateTokens(body []byte, tg *target) {
	x.walk.last = tg
	h := x.w.Header()
	x.headers(h)
	h.Set("X-Loopctl-Estimate", "true")
	h.Set("Content-Type", "application/json")
	n := max(len(bytes.TrimSpace(body))/4, 1)
	b := strconv.AppendInt([]byte(`{"input_tokens":`), int64(n), 10)
	b = append(b, '}')
	x.w.WriteHeader(http.StatusOK)
	_, _ = x.w.Write(b)
	x.done(outcomeSuccess, http.StatusOK, "")
}
