package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// responsesWire is the OpenAI Responses API (POST .../responses).
type responsesWire struct{}

func (responsesWire) matches(path string) bool { return strings.HasSuffix(path, "/responses") }

func (responsesWire) endpoint() string { return "responses" }

func (responsesWire) errorBody(status int, msg string) string {
	return openaiWire{}.errorBody(status, msg)
}

type rsRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"` // a string or a list of items
	Instructions       string          `json:"instructions"`
	Tools              []rsTool        `json:"tools"`
	MaxOutputTokens    int             `json:"max_output_tokens"`
	Stream             bool            `json:"stream"`
	PreviousResponseID string          `json:"previous_response_id"`
}

type rsTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

type rsItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"` // a string or a list of parts
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Output    json.RawMessage `json:"output"` // a string or a list of parts
}

func (responsesWire) decode(body []byte) (Request, string, error) {
	var in rsRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, "", err
	}
	r := Request{Model: in.Model, MaxTokens: in.MaxOutputTokens, Stream: in.Stream, PreviousResponseID: in.PreviousResponseID}
	var p firstProblem
	if in.Model == "" {
		p.note("you must provide a model parameter")
	}
	if in.Instructions != "" {
		r.Messages = append(r.Messages, Message{Role: "system", Content: in.Instructions})
	}
	var s string
	var items []rsItem
	switch {
	case json.Unmarshal(in.Input, &s) == nil:
		r.Messages = append(r.Messages, Message{Role: "user", Content: s})
	case json.Unmarshal(in.Input, &items) == nil:
	default:
		p.note("input: must be a string or a list of input items")
	}
	r.Messages = rsItems(r.Messages, items, &p)
	for i, t := range in.Tools {
		if t.Type == "function" && t.Name == "" {
			p.note("tools[%d].name: required", i)
		}
		r.Tools = append(r.Tools, Tool{Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return r, string(p), nil
}

// rsItems appends the conversation of the input items to msgs: function
// calls (consecutive ones join one assistant message), their outputs, and
// messages; reasoning and other items are left out.
func rsItems(msgs []Message, items []rsItem, p *firstProblem) []Message {
	for i, it := range items {
		switch {
		case it.Type == "function_call":
			if it.CallID == "" || it.Name == "" {
				p.note("input[%d]: call_id and name are required", i)
			}
			call := ToolCall{ID: it.CallID, Name: it.Name, Arguments: it.Arguments}
			if n := len(msgs); n > 0 && msgs[n-1].Role == "assistant" {
				msgs[n-1].ToolCalls = append(msgs[n-1].ToolCalls, call)
			} else {
				msgs = append(msgs, Message{Role: "assistant", ToolCalls: []ToolCall{call}})
			}
		case it.Type == "function_call_output":
			out, _ := text(it.Output)
			msgs = append(msgs, Message{Role: "tool", ToolCallID: it.CallID, Content: out})
		case it.Type == "message" || (it.Type == "" && it.Role != ""):
			content, ok := text(it.Content)
			if !ok {
				p.note("input[%d].content: invalid type", i)
			}
			role := it.Role
			if role == "developer" {
				role = "system"
			}
			msgs = append(msgs, Message{Role: role, Content: content})
		default: // reasoning and other items: kept out of the conversation
		}
	}
	return msgs
}

// rsIDs are the ids of one Responses reply.
type rsIDs struct{ resp, msg string }

func responseIDs(r Request) rsIDs {
	return rsIDs{fmt.Sprintf("resp_%x_%d", r.nonce, r.Seq), fmt.Sprintf("msg_%x_%d", r.nonce, r.Seq)}
}

func callID(r Request, c ToolCall, i int) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d_%d", r.Seq, i)
}

// output returns the reply's output items, complete.
func (responsesWire) output(r Request, rep Reply) []any {
	ids := responseIDs(r)
	out := []any{}
	if rep.Text != "" || len(rep.ToolCalls) == 0 {
		out = append(out, rsMessage(ids.msg, rep.Text, "completed"))
	}
	for i, c := range rep.ToolCalls {
		out = append(out, rsCall(r, c, i, c.Arguments, "completed"))
	}
	return out
}

func rsMessage(id, text, status string) map[string]any {
	content := []any{}
	if status == "completed" {
		content = append(content, map[string]any{"type": "output_text", "text": text, "annotations": []any{}})
	}
	return map[string]any{"type": "message", "id": id, "status": status, "role": "assistant", "content": content}
}

func rsCall(r Request, c ToolCall, i int, args, status string) map[string]any {
	return map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", r.Seq, i),
		"call_id": callID(r, c, i), "name": c.Name, "arguments": args, "status": status}
}

// response returns the response object.
func (w responsesWire) response(r Request, rep Reply, status string, output []any) map[string]any {
	var usage any
	if status == "completed" {
		usage = map[string]any{
			"input_tokens": rep.Usage.prompt(), "output_tokens": rep.Usage.OutputTokens,
			"total_tokens":         rep.Usage.prompt() + rep.Usage.OutputTokens,
			"input_tokens_details": map[string]any{"cached_tokens": rep.Usage.CachedTokens}, "output_tokens_details": map[string]any{"reasoning_tokens": 0},
		}
	}
	return map[string]any{
		"id": responseIDs(r).resp, "object": "response", "created_at": 1700000000, "status": status,
		"model": r.Model, "output": output, "usage": usage, "error": nil, "incomplete_details": nil,
		"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}, "previous_response_id": nilIfEmpty(r.PreviousResponseID),
	}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (w responsesWire) reply(rw http.ResponseWriter, r Request, rep Reply) {
	b, _ := json.Marshal(w.response(r, rep, "completed", w.output(r, rep)))
	writeJSON(rw, http.StatusOK, nil, string(b))
}

// stream sends rep as Responses API events (see [StreamFault] for their order).
func (w responsesWire) stream(rw http.ResponseWriter, hr *http.Request, r Request, rep Reply, released <-chan struct{}) {
	var events []string
	seq := 0
	add := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		b, _ := json.Marshal(fields)
		events = append(events, "event: "+typ+"\ndata: "+string(b)+"\n\n")
	}
	ids := responseIDs(r)
	add("response.created", map[string]any{"response": w.response(r, rep, "in_progress", []any{})})
	add("response.in_progress", map[string]any{"response": w.response(r, rep, "in_progress", []any{})})
	idx := 0
	if rep.Text != "" || len(rep.ToolCalls) == 0 {
		textEvents(add, ids.msg, rep)
		idx++
	}
	for i, c := range rep.ToolCalls {
		item := fmt.Sprintf("fc_%d_%d", r.Seq, i)
		add("response.output_item.added", map[string]any{"output_index": idx, "item": rsCall(r, c, i, "", "in_progress")})
		add("response.function_call_arguments.delta", map[string]any{"item_id": item, "output_index": idx, "delta": c.Arguments})
		add("response.function_call_arguments.done", map[string]any{"item_id": item, "output_index": idx, "arguments": c.Arguments})
		add("response.output_item.done", map[string]any{"output_index": idx, "item": rsCall(r, c, i, c.Arguments, "completed")})
		idx++
	}
	add("response.completed", map[string]any{"response": w.response(r, rep, "completed", w.output(r, rep))})
	sendEvents(rw, hr, events, rep.StreamFault, released, func(k StreamFaultKind) string {
		switch k {
		case StreamMalformed:
			return "event: response.output_text.delta\ndata: {\"type\":\"response.outp\n\n"
		case StreamOverloaded:
			return "event: error\ndata: {\"type\":\"error\",\"code\":\"overloaded_error\",\"message\":\"llmtest: overloaded\",\"param\":null}\n\n"
		}
		return "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"llmtest: the stream failed\",\"param\":null}\n\n"
	})
}

// textEvents adds the events of a reply's text: its output item (index 0),
// content part and deltas.
func textEvents(add func(string, map[string]any), msgID string, rep Reply) {
	idx := 0
	ids := rsIDs{msg: msgID}
	part := map[string]any{"type": "output_text", "text": "", "annotations": []any{}}
	loc := func(m map[string]any) map[string]any {
		m["item_id"], m["output_index"], m["content_index"] = ids.msg, idx, 0
		return m
	}
	add("response.output_item.added", map[string]any{"output_index": idx, "item": rsMessage(ids.msg, "", "in_progress")})
	add("response.content_part.added", loc(map[string]any{"part": part}))
	texts := rep.Chunks
	if texts == nil && rep.Text != "" {
		texts = []string{rep.Text}
	}
	for _, t := range texts {
		add("response.output_text.delta", loc(map[string]any{"delta": t, "logprobs": []any{}}))
	}
	add("response.output_text.done", loc(map[string]any{"text": rep.Text, "logprobs": []any{}}))
	add("response.content_part.done", loc(map[string]any{"part": map[string]any{"type": "output_text", "text": rep.Text, "annotations": []any{}}}))
	add("response.output_item.done", map[string]any{"output_index": idx, "item": rsMessage(ids.msg, rep.Text, "completed")})
}
