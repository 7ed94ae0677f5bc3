package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// openaiWire is the OpenAI Chat Completions format.
type openaiWire struct{}

func (openaiWire) matches(path string) bool { return strings.HasSuffix(path, "/chat/completions") }

func (openaiWire) endpoint() string { return "chat" }

type oaRequest struct {
	Model               string      `json:"model"`
	Messages            []oaMessage `json:"messages"`
	Tools               []oaTool    `json:"tools"`
	MaxTokens           int         `json:"max_tokens"`
	MaxCompletionTokens int         `json:"max_completion_tokens"`
	Stream              bool        `json:"stream"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type oaMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // string, array of parts, or null
	ToolCalls  []oaToolCall    `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

type oaToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type oaTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// text decodes a content field: a string, an array of parts (their text
// concatenated), or null.
func text(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), true
}

func (openaiWire) decode(body []byte) (Request, string, error) {
	var in oaRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, "", err
	}
	r := Request{Model: in.Model, MaxTokens: in.MaxCompletionTokens, Stream: in.Stream, includeUsage: in.StreamOptions.IncludeUsage}
	if r.MaxTokens == 0 {
		r.MaxTokens = in.MaxTokens
	}
	var p firstProblem
	if in.Model == "" {
		p.note("you must provide a model parameter")
	}
	if len(in.Messages) == 0 {
		p.note("'messages' must contain at least one message")
	}
	r.Messages = oaMessages(in.Messages, &p)
	r.Tools = oaTools(in.Tools, &p)
	return r, string(p), nil
}

// oaMessages decodes the conversation, noting bad content, unknown roles,
// and tool_calls that tool messages do not answer before the next other
// message (or tool messages answering no call).
func oaMessages(msgs []oaMessage, p *firstProblem) []Message {
	var out []Message
	var pending []string // tool_call ids still to be answered
	for i, m := range msgs {
		content, ok := text(m.Content)
		if !ok {
			p.note("messages[%d].content: invalid type", i)
		}
		if m.Role != "tool" && len(pending) > 0 {
			p.note("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing: %s", strings.Join(pending, ", "))
			pending = nil
		}
		msg := Message{Role: m.Role, Content: content}
		switch m.Role {
		case "system", "developer":
			msg.Role = "system"
		case "user":
		case "assistant":
			if len(m.ToolCalls) == 0 && content == "" {
				p.note("messages[%d]: an assistant message needs content or tool_calls", i)
			}
			for j, c := range m.ToolCalls {
				if c.ID == "" || c.Function.Name == "" {
					p.note("messages[%d].tool_calls[%d]: id and function.name are required", i, j)
				}
				pending = append(pending, c.ID)
				msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
		case "tool":
			msg.ToolCallID = m.ToolCallID
			k := indexOf(pending, m.ToolCallID)
			if k < 0 {
				p.note("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			} else {
				pending = append(pending[:k], pending[k+1:]...)
			}
		default:
			p.note("messages[%d].role: invalid value %q", i, m.Role)
		}
		out = append(out, msg)
	}
	if len(pending) > 0 {
		p.note("an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; missing: %s", strings.Join(pending, ", "))
	}
	return out
}

// oaTools decodes the tools: functions with a name, whose parameters (if
// any) are an object.
func oaTools(tools []oaTool, p *firstProblem) []Tool {
	var out []Tool
	for i, t := range tools {
		if t.Type != "function" || t.Function.Name == "" {
			p.note("tools[%d]: type must be \"function\" and function.name is required", i)
		}
		if len(t.Function.Parameters) > 0 && !isObject(t.Function.Parameters) {
			p.note("tools[%d].function.parameters: must be an object", i)
		}
		out = append(out, Tool{Name: t.Function.Name, Description: t.Function.Description, Parameters: t.Function.Parameters})
	}
	return out
}

func (openaiWire) reply(w http.ResponseWriter, r Request, rep Reply) {
	msg := struct {
		Role      string       `json:"role"`
		Content   *string      `json:"content"`
		Refusal   *string      `json:"refusal"`
		ToolCalls []oaToolCall `json:"tool_calls,omitempty"`
	}{Role: "assistant"}
	if rep.Text != "" || len(rep.ToolCalls) == 0 {
		msg.Content = &rep.Text
	}
	for i, c := range rep.ToolCalls {
		out := oaToolCall{ID: c.ID, Type: "function"}
		if out.ID == "" {
			out.ID = fmt.Sprintf("call_%d_%d", r.Seq, i)
		}
		out.Function.Name, out.Function.Arguments = c.Name, c.Arguments
		msg.ToolCalls = append(msg.ToolCalls, out)
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	body := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-fake-%d", r.Seq),
		"object":  "chat.completion",
		"created": 1700000000,
		"model":   r.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       msg,
			"finish_reason": finish,
			"logprobs":      nil,
		}},
		"usage": rep.Usage.openAI(),
	}
	b, _ := json.Marshal(body)
	writeJSON(w, http.StatusOK, nil, string(b))
}

func (openaiWire) errorBody(status int, msg string) string {
	typ := "server_error"
	switch {
	case status == http.StatusTooManyRequests:
		typ = "rate_limit_exceeded"
	case status == http.StatusNotFound:
		typ = "not_found_error"
	case status >= 400 && status < 500:
		typ = "invalid_request_error"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "param": nil, "code": nil,
	}})
	return string(b)
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) == nil && m != nil
}
