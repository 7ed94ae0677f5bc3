package wire

import (
	"encoding/json"
	"errors"
)

// messagesMessage is the part of a Messages answer the translation reads.
type messagesMessage struct {
	ID           string            `json:"id"`
	Type         string            `json:"type"`
	Model        string            `json:"model"`
	Content      []json.RawMessage `json:"content"`
	StopReason   string            `json:"stop_reason"`
	StopSequence *string           `json:"stop_sequence"`
	Usage        *messagesUsage    `json:"usage"`
}

// messagesBlock is one content block of a Messages answer.
type messagesBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	Thinking  string          `json:"thinking,omitempty"`
	Signature string          `json:"signature,omitempty"`
}

// errNotMessage is a Messages answer whose type is not "message" (an
// error body sent with a 2xx status, say).
var errNotMessage = errors.New(`messages answer whose type is not "message"`)

// decodeMessagesAnswer decodes a Messages message: text and tool_use
// blocks, thinking blocks kept as they are (a cross-wire client never gets
// them), server tool blocks dropped; stop reason and usage.
func decodeMessagesAnswer(body []byte) (Response, error) {
	var m messagesMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return Response{}, err
	}
	if m.Type != "" && m.Type != "message" {
		return Response{}, errNotMessage
	}
	resp := Response{ID: m.ID, Model: m.Model, Stop: stopFromMessages(m.StopReason)}
	if m.StopSequence != nil {
		resp.StopSequence = *m.StopSequence
	}
	if m.Usage != nil {
		resp.Usage = m.Usage.neutral()
	}
	for _, raw := range m.Content {
		var b messagesBlock
		if err := json.Unmarshal(raw, &b); err != nil {
			return Response{}, err
		}
		switch b.Type {
		case "text":
			resp.Content = append(resp.Content, Part{Kind: Text, Text: b.Text})
		case "tool_use":
			resp.Content = append(resp.Content, Part{
				Kind: ToolCall, CallID: b.ID, Name: b.Name, Input: toolInput(b.Input),
			})
		case "thinking", "redacted_thinking":
			resp.Content = append(resp.Content, Part{
				Kind: ThinkingBlock, Text: b.Thinking, Signature: b.Signature, Raw: raw,
			})
		}
	}
	return resp, nil
}

// messagesAnswer is a Messages message as the gateway writes it.
type messagesAnswer struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Role         string          `json:"role"`
	Model        string          `json:"model"`
	Content      []messagesBlock `json:"content"`
	StopReason   string          `json:"stop_reason"`
	StopSequence *string         `json:"stop_sequence"`
	Usage        messagesUsage   `json:"usage"`
}

// encodeMessagesAnswer writes the answer as a Messages message: text
// blocks (none of whitespace only) and tool_use blocks in order; thinking blocks and reasoning items
// from another wire are dropped (a thinking block is never sent without
// the signature its own upstream made).
func encodeMessagesAnswer(resp Response) ([]byte, error) {
	out := messagesAnswer{
		ID:      mintID("msg_", resp.ID),
		Type:    "message",
		Role:    "assistant",
		Model:   resp.Model,
		Content: []messagesBlock{},
		Usage:   resp.Usage.messagesUsage(),
	}
	calls := 0
	for _, p := range resp.Content {
		switch p.Kind {
		case Text:
			if !blank(p.Text) { // the client's next request would carry it to Anthropic, which refuses it
				out.Content = append(out.Content, messagesBlock{Type: "text", Text: p.Text})
			}
		case ToolCall:
			calls++
			out.Content = append(out.Content, messagesBlock{
				Type: "tool_use", ID: p.CallID, Name: p.Name, Input: toolInput(p.Input),
			})
		}
	}
	stop := settleStop(resp.Stop, calls)
	out.StopReason = stop.messages()
	if stop == StopSequence {
		seq := resp.StopSequence
		out.StopSequence = &seq
	}
	return json.Marshal(out)
}
