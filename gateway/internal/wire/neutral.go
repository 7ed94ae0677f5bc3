package wire

import (
	"encoding/json"
	"fmt"
)

// API is one of the three client wires the gateway serves, and a wire an
// upstream speaks.
type API int

// The wires.
const (
	Chat      API = iota // OpenAI chat completions: POST /chat/completions
	Responses            // OpenAI Responses: POST /responses
	Messages             // Anthropic Messages: POST /v1/messages
)

// String returns the wire's api label: chat, responses or messages.
func (a API) String() string {
	switch a {
	case Chat:
		return "chat"
	case Responses:
		return "responses"
	case Messages:
		return "messages"
	}
	return fmt.Sprintf("wire.API(%d)", int(a))
}

// Request is a model request in the neutral form every wire decodes into
// and encodes from. It holds what the three wires can all express; what
// one wire cannot express is noted in Skip (the entry cannot serve it) or
// Dropped (it changes nothing the client reads).
type Request struct {
	Model string
	// System is the leading system prompt (Messages system, chat's leading
	// system/developer messages, Responses instructions and leading
	// system/developer input items), as text parts.
	System []Part
	// Messages are the turns after the leading system prompt. A later
	// system or developer turn has Role "system".
	Messages []Message
	Tools    []Tool
	// ToolChoice: "" (unset), "auto", "any" (a tool is required), "none",
	// or "tool" with ToolName.
	ToolChoice string
	ToolName   string
	// Parallel is false when the client asked for one tool call at a time
	// (chat/Responses parallel_tool_calls: false; Messages
	// disable_parallel_tool_use); nil: unset.
	Parallel    *bool
	MaxTokens   int // 0: unset
	Temperature *float64
	TopP        *float64
	Stop        []string
	Stream      bool
	// StreamUsage: a chat client asked for a usage chunk
	// (stream_options.include_usage).
	StreamUsage bool
	// Thinking is the reasoning the client asked for; nil: none.
	Thinking *Thinking
	User     string // metadata.user_id / user
	// Format is structured output with a JSON schema; nil: plain text.
	Format *Format
	// Skip names the parameters the request carries that no other wire can
	// express (n > 1, logprobs, audio, json_object, a required built-in
	// tool, ...): an entry on another wire cannot serve it (GATEWAY §8.3).
	Skip []string
	// Dropped names the parameters left out of a translated request
	// because they change nothing the client reads.
	Dropped []string
	// Builtins names the built-in tools offered (web_search, Anthropic
	// server tools, ...): dropped for an entry that cannot host them.
	Builtins []string

	// lits are the JSON literals the decoder read the request's longer
	// strings from: an encoder writes such a string, unchanged, as its
	// literal (literals.go).
	lits literals
}

// Thinking is a request's reasoning setting: a Messages budget or an
// OpenAI effort, each mapped to the other (GATEWAY §8.2).
type Thinking struct {
	Budget int    // Messages thinking.budget_tokens; 0: from Effort
	Effort string // low, medium, high (OpenAI reasoning_effort / reasoning.effort); "": from Budget
}

// Format is structured output with a JSON schema.
type Format struct {
	Name   string
	Schema json.RawMessage
	Strict bool
}

// Message is one turn: Role "user", "assistant" or "system" (a system or
// developer turn after the first user or assistant turn). Tool results are
// parts of user turns, as on Messages.
type Message struct {
	Role  string
	Parts []Part
}

// PartKind is what a Part holds.
type PartKind int

// The kinds of Part.
const (
	Text       PartKind = iota // Text
	Image                      // MediaType+Data (base64) or URL
	File                       // a document: MediaType+Data, URL, or FileName
	ToolCall                   // CallID, Name, Namespace, Input (JSON), Custom
	ToolResult                 // CallID, Content (text and image parts), IsError
	// ThinkingBlock is an Anthropic thinking or redacted_thinking block,
	// kept byte-identical in Raw; it reaches Anthropic-family upstreams
	// only.
	ThinkingBlock
	// Reasoning is a Responses reasoning item, kept byte-identical in Raw;
	// it reaches openai upstreams on the Responses wire only.
	Reasoning
)

// Part is one piece of a turn's content.
type Part struct {
	Kind PartKind
	Text string // Text; a ThinkingBlock's text (answers)
	// Image and File.
	MediaType string
	Data      string // base64
	URL       string
	FileName  string
	// ToolCall and ToolResult.
	CallID    string
	Name      string
	Namespace string          // a Responses namespace tool's namespace
	Input     json.RawMessage // ToolCall: the arguments as a JSON object
	// Custom is a Codex freeform custom tool call: Text holds its raw
	// input string.
	Custom  bool
	Content []Part // ToolResult
	IsError bool   // ToolResult
	// ThinkingBlock and Reasoning: the original block or item, byte-identical.
	Raw       json.RawMessage
	Signature string // ThinkingBlock: the block's signature
}

// Tool is a function tool the request offers.
type Tool struct {
	Name        string
	Description string
	Schema      json.RawMessage // the parameters' JSON schema (nil: an empty object)
	Namespace   string          // a Responses namespace tool's namespace
	Custom      bool            // a Codex freeform custom tool (one string field "input")
}

// Stop is why an answer ended, in the neutral form.
type Stop int

// The stop reasons.
const (
	EndTurn       Stop = iota // a natural end (Anthropic end_turn, pause_turn; chat stop; Responses completed)
	StopSequence              // a stop sequence matched
	MaxTokens                 // the output limit (or the context window) was reached
	ToolUse                   // the answer ends with tool calls
	Refusal                   // the model refused (Anthropic refusal, OpenAI content_filter)
	ContextWindow             // Anthropic model_context_window_exceeded
)

// Usage counts tokens the Anthropic way: Input excludes cached tokens
// (GATEWAY §8.4).
type Usage struct {
	Input      int // input tokens not read from or written to the cache
	CacheRead  int
	CacheWrite int
	Output     int
	Reasoning  int // output tokens spent reasoning (part of Output)
}

// Response is a whole (non-streaming) answer in the neutral form.
type Response struct {
	ID           string
	Model        string
	Content      []Part // Text, ToolCall, ThinkingBlock, Reasoning parts in order
	Stop         Stop
	StopSequence string
	Usage        Usage
}

// Target says how to send a translated request to one upstream entry.
type Target struct {
	API   API
	Model string // the upstream model name written into the request
	// Family is true for an Anthropic-family upstream (anthropic, bedrock,
	// vertex): the only ones thinking blocks are sent to.
	Family bool
	// MaxTokensField is the chat field max_tokens goes in: "max_tokens"
	// (default) or "max_completion_tokens".
	MaxTokensField string
	// DefaultMaxTokens is a Messages request's max_tokens when the client
	// gave none (default 4096).
	DefaultMaxTokens int
	// StreamUsage asks a translated chat stream for its usage
	// (stream_options.include_usage).
	StreamUsage bool
}

// UnsupportedError says an entry cannot serve a request: Field names the
// parameter its wire cannot express (GATEWAY §8.3). The entry is skipped
// with no verdict.
type UnsupportedError struct {
	From, To API
	Field    string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("the %s wire cannot express %s of a %s request", e.To, e.Field, e.From)
}

// RequestError is a request the gateway cannot decode: a 400
// invalid_request_error in the client's wire, naming Param when known.
type RequestError struct {
	Param   string
	Message string
}

func (e *RequestError) Error() string { return e.Message }
