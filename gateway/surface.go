package gateway

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
)

// The rest of the surface of chains across wires (docs/GATEWAY.md §8.7,
// §8.8): count_tokens for a model routed to an openai entry, the model
// list in Anthropic's shape, refusals that fall back.

// estimateTokens answers POST /v1/messages/count_tokens for a model whose
// routed entry tg is not an anthropic upstream: 200 {"input_tokens": N}
// estimated locally (one token per 4 bytes of the request's JSON, at least
// 1), with x-loopctl-estimate: true. No upstream request, no verdict.
func (x *exchange) estimateTokens(body []byte, tg *target) {
	x.served, x.servedHdr = tg.ref, tg.hdr
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

// anthropicModelList is GET /v1/models in Anthropic's list shape, for a
// client that sends anthropic-version (Claude Code, @anthropic-ai/sdk).
func anthropicModelList(models []Model) []byte {
	type entry struct {
		Type        string `json:"type"`
		ID          string `json:"id"`
		DisplayName string `json:"display_name"`
		CreatedAt   string `json:"created_at"`
	}
	list := struct {
		Data    []entry `json:"data"`
		HasMore bool    `json:"has_more"`
		FirstID *string `json:"first_id"`
		LastID  *string `json:"last_id"`
	}{Data: []entry{}}
	for _, m := range models {
		list.Data = append(list.Data, entry{Type: "model", ID: m.Name, DisplayName: m.Name, CreatedAt: "1970-01-01T00:00:00Z"})
	}
	if n := len(list.Data); n > 0 {
		list.FirstID, list.LastID = &list.Data[0].ID, &list.Data[n-1].ID
	}
	b, _ := json.Marshal(list)
	return b
}

// refusal reports whether a served attempt is a refusal before any content
// that the model's on_refusal: fallback turns into the next entry's
// answer (§8.7): a whole answer, or a committed stream's held events, on
// the client's wire.
func (x *exchange) refusal(res *result) bool {
	if !x.rt.refusals || !x.endpoint.translated {
		return false
	}
	if res.stream != nil {
		return refusedStream(x.endpoint.wire, res.stream.held.Bytes())
	}
	return wire.Refused(x.endpoint.wire, res.body.Bytes())
}

// refusedStream reports whether a committed stream's held events (on wire
// api) end in a refusal before any content: the stream committed at its
// stop, not at a text or a call.
func refusedStream(api wire.API, held []byte) bool {
	switch api {
	case wire.Messages:
		return bytes.Contains(held, []byte(`"stop_reason":"refusal"`)) && !bytes.Contains(held, []byte(`"content_block_delta"`))
	case wire.Chat:
		return bytes.Contains(held, []byte(`"finish_reason":"content_filter"`)) &&
			!bytes.Contains(held, []byte(`"tool_calls"`)) && !hasChatText(held)
	}
	return bytes.Contains(held, []byte(`"content_filter"`)) && !bytes.Contains(held, []byte(`response.output_text.delta`)) &&
		!bytes.Contains(held, []byte(`function_call_arguments.delta`))
}

// hasChatText reports whether chat chunks carry non-empty content.
func hasChatText(held []byte) bool {
	for rest := held; ; {
		i := bytes.Index(rest, []byte(`"content":"`))
		if i < 0 {
			return false
		}
		rest = rest[i+len(`"content":"`):]
		if len(rest) > 0 && rest[0] != '"' {
			return true
		}
	}
}
