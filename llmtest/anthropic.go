package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropicWire is the Anthropic Messages format.
type anthropicWire struct{}

func (anthropicWire) matches(path string) bool { return strings.HasSuffix(path, "/v1/messages") }

func (anthropicWire) endpoint() string { return "messages" }

type anRequest struct {
	Model     string          `json:"model"`
	MaxTokens int             `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	System    json.RawMessage `json:"system"` // string or array of text blocks
	Messages  []anMessage     `json:"messages"`
	Tools     []anTool        `json:"tools"`
}

type anMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // string or array of blocks
}

type anTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type anBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"` // tool_result: string or array of blocks
}

// blocks decodes a content field: a string is one text block.
func blocks(raw json.RawMessage) ([]anBlock, bool) {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anBlock{{Type: "text", Text: &s}}, true
	}
	var bs []anBlock
	if json.Unmarshal(raw, &bs) != nil {
		return nil, false
	}
	return bs, true
}

// blockText concatenates the text of text blocks.
func blockText(bs []anBlock) string {
	var b strings.Builder
	for _, x := range bs {
		if x.Type == "text" && x.Text != nil {
			b.WriteString(*x.Text)
		}
	}
	return b.String()
}

func (anthropicWire) decode(body []byte) (Request, string, error) {
	var in anRequest
	if err := json.Unmarshal(body, &in); err != nil {
		return Request{}, "", err
	}
	r := Request{Model: in.Model, MaxTokens: in.MaxTokens, Stream: in.Stream}
	var p firstProblem
	if in.Model == "" {
		p.note("model: Field required")
	}
	if in.MaxTokens < 1 {
		p.note("max_tokens: Field required (at least 1)")
	}
	r.Messages = anSystem(in.System, &p)
	if len(in.Messages) == 0 {
		p.note("messages: at least one message is required")
	} else if in.Messages[0].Role != "user" {
		p.note("messages: first message must use the \"user\" role")
	}
	r.Messages = append(r.Messages, anMessages(in.Messages, &p)...)
	r.Tools = anTools(in.Tools, &p)
	return r, string(p), nil
}

// anSystem decodes the system field, absent, a string or text blocks, into
// one system message per block.
func anSystem(raw json.RawMessage, p *firstProblem) []Message {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	sys, ok := blocks(raw)
	if !ok {
		p.note("system: Input should be a valid string or list of text blocks")
	}
	var out []Message
	for _, b := range sys {
		out = append(out, Message{Role: "system", Content: blockText([]anBlock{b})})
	}
	return out
}

// anMessages decodes the conversation, noting empty content, unknown roles,
// and tool_use ids the next message does not answer with tool_result blocks.
func anMessages(msgs []anMessage, p *firstProblem) []Message {
	var out []Message
	var pending []string // tool_use ids of the previous assistant message
	for i, m := range msgs {
		bs, ok := blocks(m.Content)
		if !ok || len(bs) == 0 {
			p.note("messages.%d: all messages must have non-empty content", i)
		}
		switch m.Role {
		case "user":
			var user []Message
			user, pending = anUser(i, bs, pending, p)
			out = append(out, user...)
		case "assistant":
			out = append(out, anAssistant(i, bs, p))
		default:
			p.note("messages.%d.role: Input should be 'user' or 'assistant'", i)
		}
		if len(pending) > 0 {
			p.note("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i-1, strings.Join(pending, ", "))
		}
		pending = nil
		if m.Role == "assistant" {
			for _, b := range bs {
				if b.Type == "tool_use" {
					pending = append(pending, b.ID)
				}
			}
		}
	}
	return out
}

// anUser decodes user message i: a tool message for each of its tool_result
// blocks (which must come first and answer a pending tool_use id, which it
// takes off pending), then a user message with its text unless it holds only
// tool results. It returns the messages and the ids still pending.
func anUser(i int, bs []anBlock, pending []string, p *firstProblem) ([]Message, []string) {
	var out []Message
	results := true // tool_result blocks must come first
	for j, b := range bs {
		switch b.Type {
		case "tool_result":
			if !results {
				p.note("messages.%d.content.%d: tool_result blocks must come before any other content", i, j)
			}
			k := indexOf(pending, b.ToolUseID)
			if k < 0 {
				p.note("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, j, b.ToolUseID)
			} else {
				pending = append(pending[:k], pending[k+1:]...)
			}
			content, ok := toolResultText(b.Content)
			if !ok {
				p.note("messages.%d.content.%d.content: Input should be a valid string or list of blocks", i, j)
			}
			out = append(out, Message{Role: "tool", ToolCallID: b.ToolUseID, IsError: b.IsError, Content: content})
		case "text":
			results = false
			if b.Text == nil || *b.Text == "" {
				p.note("messages.%d.content.%d: text content blocks must be non-empty", i, j)
			}
		default:
			results = false
		}
	}
	if t := blockText(bs); t != "" || !hasType(bs, "tool_result") {
		out = append(out, Message{Role: "user", Content: t})
	}
	return out, pending
}

// anAssistant decodes assistant message i: its text and its tool_use blocks,
// which need an id, a name and an object for input.
func anAssistant(i int, bs []anBlock, p *firstProblem) Message {
	msg := Message{Role: "assistant", Content: blockText(bs)}
	for j, b := range bs {
		switch b.Type {
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				p.note("messages.%d.content.%d: tool_use blocks need id and name", i, j)
			}
			if !isObject(b.Input) {
				p.note("messages.%d.content.%d.input: Input should be a valid dictionary", i, j)
			}
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
		case "text":
			if b.Text == nil || *b.Text == "" {
				p.note("messages.%d.content.%d: text content blocks must be non-empty", i, j)
			}
		}
	}
	return msg
}

// anTools decodes the tools, each of which needs a name and an object schema.
func anTools(tools []anTool, p *firstProblem) []Tool {
	var out []Tool
	for i, t := range tools {
		if t.Name == "" {
			p.note("tools.%d.name: Field required", i)
		}
		var schema struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(t.InputSchema, &schema) != nil || schema.Type != "object" {
			p.note("tools.%d.input_schema.type: Input should be 'object'", i)
		}
		out = append(out, Tool{Name: t.Name, Description: t.Description, Parameters: t.InputSchema})
	}
	return out
}

// toolResultText decodes a tool_result's content: absent, a string, or blocks.
func toolResultText(raw json.RawMessage) (string, bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "", true
	}
	bs, ok := blocks(raw)
	return blockText(bs), ok
}

func hasType(bs []anBlock, typ string) bool {
	for _, b := range bs {
		if b.Type == typ {
			return true
		}
	}
	return false
}

func (anthropicWire) reply(w http.ResponseWriter, r Request, rep Reply) {
	content := []any{}
	if rep.Text != "" {
		content = append(content, map[string]any{"type": "text", "text": rep.Text})
	}
	for i, c := range rep.ToolCalls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("toolu_%d_%d", r.Seq, i)
		}
		var input any = json.RawMessage(c.Arguments)
		if c.Arguments == "" {
			input = map[string]any{}
		} else if !json.Valid([]byte(c.Arguments)) {
			input = c.Arguments // not JSON: sent as a string
		}
		content = append(content, map[string]any{"type": "tool_use", "id": id, "name": c.Name, "input": input})
	}
	stop := "end_turn"
	if len(rep.ToolCalls) > 0 {
		stop = "tool_use"
	}
	b, _ := json.Marshal(map[string]any{
		"id":            fmt.Sprintf("msg_fake_%d", r.Seq),
		"type":          "message",
		"role":          "assistant",
		"model":         r.Model,
		"content":       content,
		"stop_reason":   stop,
		"stop_sequence": nil,
		"usage":         rep.Usage.anthropic(),
	})
	writeJSON(w, http.StatusOK, nil, string(b))
}

func (anthropicWire) errorBody(status int, msg string) string {
	typ := "api_error"
	switch status {
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusForbidden:
		typ = "permission_error"
	case http.StatusNotFound:
		typ = "not_found_error"
	case http.StatusRequestEntityTooLarge:
		typ = "request_too_large"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
	return string(b)
}
