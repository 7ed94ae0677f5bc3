package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// stream sends rep as Anthropic Messages server-sent events (see
// [StreamFault] for their order), tool calls as tool_use blocks whose input
// comes in one input_json_delta.
func (anthropicWire) stream(w http.ResponseWriter, hr *http.Request, r Request, rep Reply, released <-chan struct{}) {
	var events []string
	add := func(typ string, fields map[string]any) {
		fields["type"] = typ
		b, _ := json.Marshal(fields)
		events = append(events, "event: "+typ+"\ndata: "+string(b)+"\n\n")
	}
	add("message_start", map[string]any{"message": map[string]any{
		"id": fmt.Sprintf("msg_fake_%d", r.Seq), "type": "message", "role": "assistant", "model": r.Model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": rep.Usage.InputTokens, "output_tokens": 1, "cache_read_input_tokens": rep.Usage.CachedTokens, "cache_creation_input_tokens": 0},
	}})
	idx := 0
	if rep.Text != "" {
		add("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
	}
	add("ping", map[string]any{})
	if rep.Text != "" {
		texts := rep.Chunks
		if texts == nil {
			texts = []string{rep.Text}
		}
		for _, t := range texts {
			add("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "text_delta", "text": t}})
		}
		add("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	for i, c := range rep.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("toolu_%d_%d", r.Seq, i)
		}
		args := c.Arguments
		if args == "" {
			args = "{}"
		}
		add("content_block_start", map[string]any{"index": idx, "content_block": map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": map[string]any{}}})
		add("content_block_delta", map[string]any{"index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": args}})
		add("content_block_stop", map[string]any{"index": idx})
		idx++
	}
	stop := "end_turn"
	if len(rep.ToolCalls) > 0 {
		stop = "tool_use"
	}
	add("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]any{"output_tokens": rep.Usage.OutputTokens}})
	add("message_stop", map[string]any{})
	sendEvents(w, hr, events, rep.StreamFault, released, func(k StreamFaultKind) string {
		switch k {
		case StreamMalformed:
			return "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"ind\n\n"
		case StreamOverloaded:
			return "event: error\ndata: " + anthropicWire{}.errorBody(529, "Overloaded") + "\n\n"
		}
		return "event: error\ndata: " + anthropicWire{}.errorBody(http.StatusInternalServerError, "llmtest: the stream failed") + "\n\n"
	})
}

// countTokensWire is Anthropic's POST .../v1/messages/count_tokens: the
// request is checked as a Messages request (max_tokens aside) and answered
// with {"input_tokens": n}, n being the Reply's Usage.InputTokens or, when
// that is 0, one token per four bytes of the conversation's text (at least
// 1). A Reply's Fault is answered as on Messages.
type countTokensWire struct{}

func (countTokensWire) matches(path string) bool {
	return strings.HasSuffix(path, "/v1/messages/count_tokens")
}

func (countTokensWire) endpoint() string { return "count_tokens" }

func (countTokensWire) errorBody(status int, msg string) string {
	return anthropicWire{}.errorBody(status, msg)
}

func (countTokensWire) decode(body []byte) (Request, string, error) {
	r, problem, err := anthropicWire{}.decode(body)
	if strings.HasPrefix(problem, "max_tokens:") {
		problem = ""
		r2, p2, _ := anthropicWire{}.decode(withMaxTokens(body))
		r, problem = r2, p2
		r.MaxTokens = 0
	}
	return r, problem, err
}

// withMaxTokens returns body with "max_tokens": 1 set (count_tokens does
// not take it).
func withMaxTokens(body []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	m["max_tokens"] = json.RawMessage("1")
	b, _ := json.Marshal(m)
	return b
}

func (countTokensWire) reply(w http.ResponseWriter, r Request, rep Reply) {
	n := rep.Usage.InputTokens
	if n == 0 {
		size := 0
		for _, m := range r.Messages {
			size += len(m.Content)
		}
		n = int64(max(size/4, 1))
	}
	b, _ := json.Marshal(map[string]any{"input_tokens": n})
	writeJSON(w, http.StatusOK, nil, string(b))
}
