package wire

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// answerView is what a client reads from an answer, as decoded by its
// wire's official SDK.
type answerView struct {
	Text    string
	Calls   []callView
	Stop    string // Messages stop_reason, chat finish_reason, Responses status[:reason]
	StopSeq string
	Usage   usageView
}

// callView is one tool call as a client reads it.
type callView struct {
	ID, Name, Namespace string
	Args                string // compact JSON (function calls)
	Input               string // a custom tool call's raw input
	Custom              bool
}

// usageView is an answer's usage in the client's own terms: Messages
// fills Input, CacheRead, CacheWrite and Output; OpenAI wires fill
// Prompt, Cached, Output, Reasoning and Total.
type usageView struct {
	Input, CacheRead, CacheWrite     int64
	Prompt, Cached, Reasoning, Total int64
	Output                           int64
}

// oracleView decodes a translated answer with the official SDK of the
// client's wire, checks the id's form and model, and returns what the
// client reads.
func oracleView(t *testing.T, api API, body []byte, model string) answerView {
	t.Helper()
	if !json.Valid(body) {
		t.Fatalf("invalid JSON: %s", body)
	}
	var v answerView
	switch api {
	case Messages:
		v = messagesView(t, body, model)
	case Chat:
		v = chatView(t, body, model)
	case Responses:
		v = responsesView(t, body, model)
	}
	return v
}

// messagesView decodes a Messages answer with anthropic-sdk-go.
func messagesView(t *testing.T, body []byte, model string) answerView {
	t.Helper()
	var m anthropic.Message
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("anthropic.Message: %v\n%s", err, body)
	}
	if len(m.ID) < 5 || m.ID[:4] != "msg_" || m.Type != "message" || m.Role != "assistant" || string(m.Model) != model {
		t.Errorf("id %q type %q role %q model %q, want msg_…, message, assistant, %q", m.ID, m.Type, m.Role, m.Model, model)
	}
	v := answerView{Stop: string(m.StopReason), StopSeq: m.StopSequence, Usage: usageView{
		Input: m.Usage.InputTokens, CacheRead: m.Usage.CacheReadInputTokens,
		CacheWrite: m.Usage.CacheCreationInputTokens, Output: m.Usage.OutputTokens,
	}}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			v.Text += b.Text
		case "tool_use":
			v.Calls = append(v.Calls, callView{ID: b.ID, Name: b.Name, Args: compactString(t, b.Input)})
		default:
			t.Errorf("unexpected block %s", b.RawJSON())
		}
	}
	return v
}

// chatView decodes a chat completion with openai-go.
func chatView(t *testing.T, body []byte, model string) answerView {
	t.Helper()
	var c openai.ChatCompletion
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatalf("openai.ChatCompletion: %v\n%s", err, body)
	}
	if len(c.ID) < 10 || c.ID[:9] != "chatcmpl-" || c.Object != "chat.completion" || c.Model != model || len(c.Choices) != 1 {
		t.Fatalf("id %q object %q model %q choices %d, want chatcmpl-…, chat.completion, %q, 1", c.ID, c.Object, c.Model, len(c.Choices), model)
	}
	choice := c.Choices[0]
	v := answerView{Text: choice.Message.Content, Stop: choice.FinishReason, Usage: usageView{
		Prompt: c.Usage.PromptTokens, Cached: c.Usage.PromptTokensDetails.CachedTokens,
		Output: c.Usage.CompletionTokens, Reasoning: c.Usage.CompletionTokensDetails.ReasoningTokens,
		Total: c.Usage.TotalTokens,
	}}
	for _, call := range choice.Message.ToolCalls {
		switch call.Type {
		case "function":
			fn := call.AsFunction()
			v.Calls = append(v.Calls, callView{ID: fn.ID, Name: fn.Function.Name,
				Args: compactString(t, []byte(fn.Function.Arguments))})
		case "custom":
			c := call.AsCustom()
			v.Calls = append(v.Calls, callView{ID: c.ID, Name: c.Custom.Name, Input: c.Custom.Input, Custom: true})
		default:
			t.Errorf("tool call type %q, want function or custom", call.Type)
		}
	}
	return v
}

// responsesView decodes a Responses response with openai-go.
func responsesView(t *testing.T, body []byte, model string) answerView {
	t.Helper()
	var r responses.Response
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("responses.Response: %v\n%s", err, body)
	}
	if !Minted(r.ID) || r.Object != "response" || r.Model != model || r.CreatedAt == 0 {
		t.Errorf("id %q object %q model %q created %v, want resp_lx…, response, %q, set", r.ID, r.Object, r.Model, r.CreatedAt, model)
	}
	v := answerView{Text: r.OutputText(), Stop: string(r.Status), Usage: usageView{
		Prompt: r.Usage.InputTokens, Cached: r.Usage.InputTokensDetails.CachedTokens,
		Output: r.Usage.OutputTokens, Reasoning: r.Usage.OutputTokensDetails.ReasoningTokens,
		Total: r.Usage.TotalTokens,
	}}
	if r.IncompleteDetails.Reason != "" {
		v.Stop += ":" + r.IncompleteDetails.Reason
	}
	for _, item := range r.Output {
		switch item.Type {
		case "message":
			if m := item.AsMessage(); len(m.ID) < 5 || m.ID[:4] != "msg_" || m.Role != "assistant" {
				t.Errorf("message item id %q role %q", m.ID, m.Role)
			}
		case "function_call":
			fc := item.AsFunctionCall()
			if len(fc.ID) < 4 || fc.ID[:3] != "fc_" || fc.Status != "completed" {
				t.Errorf("function_call id %q status %q, want fc_…, completed", fc.ID, fc.Status)
			}
			v.Calls = append(v.Calls, callView{ID: fc.CallID, Name: fc.Name, Namespace: fc.Namespace,
				Args: compactString(t, []byte(fc.Arguments))})
		case "custom_tool_call":
			c := item.AsCustomToolCall()
			v.Calls = append(v.Calls, callView{ID: c.CallID, Name: c.Name, Namespace: c.Namespace,
				Input: c.Input, Custom: true})
		default:
			t.Errorf("unexpected output item %s", item.RawJSON())
		}
	}
	return v
}

// compactString is raw JSON compacted, or the raw text marked invalid.
func compactString(t *testing.T, raw []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Errorf("arguments are not JSON: %q", raw)
		return "invalid:" + string(raw)
	}
	return buf.String()
}
