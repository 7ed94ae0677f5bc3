package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// chatCallFunction is the function of a tool call in a chat completion
// or chunk.
type chatCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// chatCompletion is the part of a chat completion the translation reads.
type chatCompletion struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content   json.RawMessage `json:"content"`
			Refusal   *string         `json:"refusal"`
			ToolCalls []struct {
				ID       string           `json:"id"`
				Function chatCallFunction `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
}

// errNoChoices is a chat completion without a choice.
var errNoChoices = errors.New("chat completion without choices")

// decodeChatAnswer decodes a chat completion: the first choice's text
// (content, then refusal), its tool calls, finish reason and usage.
// reasoning_content is dropped.
func decodeChatAnswer(body []byte) (Response, error) {
	var c chatCompletion
	if err := json.Unmarshal(body, &c); err != nil {
		return Response{}, err
	}
	if len(c.Choices) == 0 {
		return Response{}, errNoChoices
	}
	choice := c.Choices[0]
	resp := Response{ID: c.ID, Model: c.Model}
	text := chatContentText(choice.Message.Content)
	if r := choice.Message.Refusal; r != nil && *r != "" {
		text += *r
	}
	if text != "" {
		resp.Content = append(resp.Content, Part{Kind: Text, Text: text})
	}
	for _, call := range choice.Message.ToolCalls {
		resp.Content = append(resp.Content, Part{
			Kind:   ToolCall,
			CallID: call.ID,
			Name:   call.Function.Name,
			Input:  toolInput([]byte(call.Function.Arguments)),
		})
	}
	resp.Stop = stopFromChat(choice.FinishReason, len(choice.Message.ToolCalls) > 0)
	if c.Usage != nil {
		resp.Usage = c.Usage.neutral()
	}
	return resp, nil
}

// chatContentText reads a chat message's content: a string, or an array
// of parts whose text ones are concatenated; null or anything else is "".
func chatContentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" || p.Type == "output_text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// chatToolCall is one tool call of a chat answer: a function call, or a
// custom tool call with its raw input.
type chatToolCall struct {
	ID       string            `json:"id"`
	Type     string            `json:"type"`
	Function *chatCallFunction `json:"function,omitempty"`
	Custom   *chatCustomCall   `json:"custom,omitempty"`
}

// chatCustomCall is the custom field of a custom tool call.
type chatCustomCall struct {
	Name  string `json:"name"`
	Input string `json:"input"`
}

// chatAnswerMessage is a chat answer's message.
type chatAnswerMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
	Refusal   *string        `json:"refusal"`
}

// chatAnswerChoice is a chat answer's one choice.
type chatAnswerChoice struct {
	Index        int               `json:"index"`
	Message      chatAnswerMessage `json:"message"`
	FinishReason string            `json:"finish_reason"`
	Logprobs     *struct{}         `json:"logprobs"`
}

// chatAnswer is a chat completion as the gateway writes it.
type chatAnswer struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []chatAnswerChoice `json:"choices"`
	Usage   chatUsage          `json:"usage"`
}

// encodeChatAnswer writes the answer as a chat completion: text
// concatenated into content (null when the answer is only tool calls),
// tool calls with their arguments as a JSON string (custom tool calls with
// their raw input). Thinking blocks and reasoning items are dropped.
func encodeChatAnswer(resp Response) ([]byte, error) {
	var text strings.Builder
	msg := chatAnswerMessage{Role: "assistant"}
	for _, p := range resp.Content {
		switch p.Kind {
		case Text:
			text.WriteString(p.Text)
		case ToolCall:
			call := chatToolCall{ID: p.CallID, Type: "function",
				Function: &chatCallFunction{Name: p.Name, Arguments: string(toolInput(p.Input))}}
			if p.Custom {
				call = chatToolCall{ID: p.CallID, Type: "custom", Custom: &chatCustomCall{Name: p.Name, Input: p.Text}}
			}
			msg.ToolCalls = append(msg.ToolCalls, call)
		}
	}
	if text.Len() > 0 || len(msg.ToolCalls) == 0 {
		s := text.String()
		msg.Content = &s
	}
	stop := settleStop(resp.Stop, len(msg.ToolCalls))
	return json.Marshal(chatAnswer{
		ID:      mintID("chatcmpl-", resp.ID),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   resp.Model,
		Choices: []chatAnswerChoice{{Message: msg, FinishReason: stop.chat()}},
		Usage:   resp.Usage.chatUsage(),
	})
}
