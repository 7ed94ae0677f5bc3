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
// estimated locally (tokenEstimate), with x-loopctl-estimate: true. No upstream request, no verdict.
func (x *exchange) estimateTokens(body []byte, tg *target) {
	x.walk.last = tg
	h := x.w.Header()
	x.headers(h)
	h.Set("X-Loopctl-Estimate", "true")
	h.Set("Content-Type", "application/json")
	b := strconv.AppendInt([]byte(`{"input_tokens":`), tokenEstimate(body), 10)
	b = append(b, '}')
	x.w.WriteHeader(http.StatusOK)
	_, _ = x.w.Write(b)
	x.done(outcomeSuccess, http.StatusOK, "")
}

// tokenEstimate is the gateway's estimate of the tokens in b, a request's
// JSON or a part of it: one token per 4 bytes, surrounding space left out,
// at least 1. It is a rough figure on purpose: the same for every wire and
// model, with no tokenizer to ship; count_tokens answers it and a pool
// compares it with a member's token headroom (inputEstimate).
func tokenEstimate(b []byte) int64 {
	return int64(max(len(bytes.TrimSpace(b))/4, 1))
}
