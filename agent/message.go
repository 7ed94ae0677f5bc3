package agent

import (
	"context"
	"encoding/json"
)

// Role names who wrote a [Message].
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"    // instructions; providers that take a separate system prompt lift these out
	RoleUser      Role = "user"      // the person (or program) the agent works for
	RoleAssistant Role = "assistant" // the model: text and tool calls
	RoleTool      Role = "tool"      // the result of one tool call
)

// Message is one entry of a conversation.
type Message struct {
	Role    Role
	Content string

	// ToolCalls are the calls an assistant message asks for, in the model's order.
	ToolCalls []ToolCall

	// ToolCallID links a RoleTool message to the ToolCall it answers.
	ToolCallID string
	// ToolName is the tool a RoleTool message answers: the name the model asked for.
	ToolName string
	// IsError marks a RoleTool message as a soft error: the run goes on and the
	// model reads Content and adapts.
	IsError bool
}

// ToolCall is one tool invocation requested by the model.
type ToolCall struct {
	ID        string          // the provider's id for the call, echoed in the result
	Name      string          // the tool the model asked for
	Arguments json.RawMessage // a JSON object; may be empty
}

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // a JSON Schema of type "object"
}

// Request is one model request: a turn.
type Request struct {
	Model     string // the routed model; the provider puts it into the request
	Messages  []Message
	Tools     []ToolSpec
	MaxTokens int // 0: the provider's default
}

// Usage counts the tokens of one response, as the provider reported them.
type Usage struct {
	InputTokens  int64
	OutputTokens int64
}

// StopReason is why the model stopped producing its answer, as the provider
// reported it, normalised to the four values below. A reason that has no
// normalised form is passed through as the provider spelled it (for example
// Anthropic's "pause_turn"); "" means the provider reported none.
type StopReason string

// The normalised stop reasons. Providers map their own values onto them:
// OpenAI's finish_reason already uses these names ("function_call" becomes
// StopToolCalls); Anthropic's stop_reason "end_turn" and "stop_sequence"
// become StopEnd, "max_tokens" and "model_context_window_exceeded"
// StopLength, "tool_use" StopToolCalls and "refusal" StopContentFilter.
const (
	// StopEnd: the model finished its answer (or hit a stop sequence).
	StopEnd StopReason = "stop"
	// StopLength: the answer was cut at the token limit (Request.MaxTokens
	// or the model's context window): it is incomplete.
	StopLength StopReason = "length"
	// StopToolCalls: the model stopped to call tools.
	StopToolCalls StopReason = "tool_calls"
	// StopContentFilter: the provider withheld or cut the answer (a content
	// filter or a refusal).
	StopContentFilter StopReason = "content_filter"
)

// Response is the model's answer to one Request.
type Response struct {
	Message Message // Role is RoleAssistant
	Usage   Usage
	// StopReason is why the model stopped, normalised (see [StopReason]).
	StopReason StopReason
	// Model is the model the server reported answering, e.g. the dated
	// snapshot "gpt-4o-2024-08-06" for a request naming "gpt-4o"; "" if the
	// provider does not say.
	Model string
}

// Provider sends one request to a model service and returns its answer.
//
// A Provider makes exactly one attempt: retries belong to the loop's retry
// ladder. HTTP failures are returned as (or wrap) a *retry.StatusError carrying
// the status code and the Retry-After hint; connection errors and timeouts are
// returned as they are (the ladder treats them as transient); a response that
// cannot be understood is a transient error too. Implementations must be safe
// for concurrent use.
type Provider interface {
	Complete(ctx context.Context, req Request) (Response, error)
}
