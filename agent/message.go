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

// Response is the model's answer to one Request.
type Response struct {
	Message Message // Role is RoleAssistant
	Usage   Usage
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
