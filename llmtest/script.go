package llmtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// Message is one conversation entry as the server decoded it from the wire.
// Both wire formats decode to the same shape: system prompts are messages
// with Role "system" (Anthropic's system parameter comes first), and every
// tool result is its own message with Role "tool" (Anthropic's tool_result
// blocks are split out of their user message, in order).
type Message struct {
	Role       string     // "system", "user", "assistant" or "tool" (OpenAI's "developer" reads "system")
	Content    string     // the text; text blocks or parts are concatenated
	ToolCalls  []ToolCall // an assistant message's tool calls, in order
	ToolCallID string     // a tool message's call id (tool_call_id / tool_use_id)
	IsError    bool       // a tool message's is_error flag (Anthropic only)
}

// ToolCall is one tool call, in a request's assistant message or in a [Reply].
type ToolCall struct {
	ID        string // "" in a Reply: the server makes one ("call_<seq>_<i>" / "toolu_<seq>_<i>")
	Name      string
	Arguments string // JSON text; sent verbatim on the OpenAI wire, even when invalid
}

// Tool is a tool the request offered the model.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage // OpenAI "parameters" / Anthropic "input_schema"
}

// Request is one decoded request.
type Request struct {
	Seq       int    // 1-based arrival number on its Handler
	Model     string // the model the request named
	Messages  []Message
	Tools     []Tool
	MaxTokens int         // max_tokens (or OpenAI's max_completion_tokens); 0 when absent
	Stream    bool        // the request asked for a stream ("stream": true)
	Header    http.Header // the request headers
	Body      []byte      // the raw JSON body
	// Endpoint is the endpoint the request came to: "chat" (chat
	// completions), "responses", "embeddings", "messages" or
	// "count_tokens".
	Endpoint string
	// Query is the request URL's raw query string ("" when none).
	Query string
	// PreviousResponseID is a Responses API request's previous_response_id.
	PreviousResponseID string

	nonce        uint32
	includeUsage bool // a chat stream asked for a usage chunk (stream_options.include_usage)
}

// Last returns the request's last message (the zero Message if none).
func (r Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Usage is the token count a Reply reports, each wire in its own way:
// the OpenAI wires count cached tokens inside their prompt (prompt_tokens
// and input_tokens are InputTokens + CachedTokens, with cached_tokens in
// their details), Anthropic's Messages beside it (input_tokens is
// InputTokens, cache_read_input_tokens is CachedTokens).
type Usage struct {
	InputTokens, OutputTokens int64
	// CachedTokens are input tokens read from the prompt cache.
	CachedTokens int64
}

// prompt is the OpenAI wires' prompt count: cached tokens included.
func (u Usage) prompt() int64 { return u.InputTokens + u.CachedTokens }

// openAI is the usage object of a chat completion.
func (u Usage) openAI() map[string]any {
	return map[string]any{
		"prompt_tokens":         u.prompt(),
		"completion_tokens":     u.OutputTokens,
		"total_tokens":          u.prompt() + u.OutputTokens,
		"prompt_tokens_details": map[string]any{"cached_tokens": u.CachedTokens},
	}
}

// anthropic is the usage object of a Messages answer.
func (u Usage) anthropic() map[string]any {
	return map[string]any{
		"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
		"cache_read_input_tokens": u.CachedTokens, "cache_creation_input_tokens": 0,
	}
}

// Reply is a scripted answer: a completion (Text and/or ToolCalls) or, when
// Fault is set, a failure.
type Reply struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage  // reported as is (zero: zero)
	Fault     *Fault // non-nil: answer with the fault instead

	// Chunks are the content chunks a streamed reply (a request with
	// "stream": true) sends the text in; nil: Text in one chunk. See
	// [Chunked].
	Chunks []string
	// NoRole leaves out the role-only first chunk a stream starts with.
	NoRole bool
	// StreamFault, when non-nil, makes a streamed reply go wrong; see
	// [StreamFault]. It is unused when the request does not stream.
	StreamFault *StreamFault

	// Gate, when non-nil, holds the answer until it is closed. If the
	// request ends first (the client gave up) or the Handler is released,
	// the connection is dropped without a response.
	Gate <-chan struct{}
	// Delay holds the answer (its headers and, for a stream, its first
	// event) for this long: the time to first content of a slow deployment.
	// If the request ends first or the Handler is released, the connection
	// is dropped without a response. Zero: no delay. See [Delayed].
	Delay time.Duration
	// Header holds extra response headers for any answer, a success or a
	// Fault (for example a deployment's rate-limit headers; see [Limits]).
	// nil: none.
	Header http.Header
}

// Fault is a failure the server answers with.
type Fault struct {
	// Status is the HTTP status. 0: 500.
	Status int
	// Header holds extra response headers, e.g. "Retry-After" or
	// "retry-after-ms". nil: none.
	Header http.Header
	// Body is the response body, sent with Content-Type application/json.
	// "": the wire format's error object for Status, carrying Message.
	Body string
	// Message is the error message in the generated error object.
	// "": "llmtest: <status text>".
	Message string
	// Hang makes the server wait until the request's context ends (the
	// client's deadline or cancellation) or the Handler is released, then
	// drop the connection without a response. Status, Header, Body and
	// Message are then unused.
	Hang bool
	// Reset makes the server reset the connection (TCP RST) without a
	// response. Status, Header, Body and Message are then unused.
	Reset bool
}

// Text returns a Reply with text only.
func Text(s string) Reply { return Reply{Text: s} }

// Calls returns a Reply that calls tools, in order.
func Calls(calls ...ToolCall) Reply { return Reply{ToolCalls: calls} }

// Call returns a ToolCall with a server-made id.
func Call(name, args string) ToolCall { return ToolCall{Name: name, Arguments: args} }

// Error returns a Reply that fails with HTTP status and the wire format's
// error object.
func Error(status int) Reply { return Reply{Fault: &Fault{Status: status}} }

// RateLimit returns a Reply that fails with 429 and, unless retryAfter is
// "", the header "Retry-After: <retryAfter>" (seconds or an HTTP-date).
func RateLimit(retryAfter string) Reply {
	f := &Fault{Status: http.StatusTooManyRequests}
	if retryAfter != "" {
		f.Header = http.Header{"Retry-After": {retryAfter}}
	}
	return Reply{Fault: f}
}

// Hang returns a Reply that never answers: the server waits until the
// request's context ends.
func Hang() Reply { return Reply{Fault: &Fault{Hang: true}} }

// Reset returns a Reply that resets the connection without a response.
func Reset() Reply { return Reply{Fault: &Fault{Reset: true}} }

// Streamed returns a Reply whose stream goes wrong with kind at event at
// (see [StreamFault]); its text comes in chunks.
func Streamed(kind StreamFaultKind, at int, chunks ...string) Reply {
	r := Chunked(chunks...)
	r.StreamFault = &StreamFault{At: at, Kind: kind}
	return r
}

// Malformed returns a Reply whose body is cut-off JSON with status 200.
func Malformed() Reply { return Raw(http.StatusOK, `{"id":"broken","choi`) }

// Raw returns a Reply with this status and body, sent as application/json.
func Raw(status int, body string) Reply {
	return Reply{Fault: &Fault{Status: status, Body: body}}
}

// Script answers a request. It is called on the server's goroutines, one
// call per request (concurrently for concurrent requests), and must be safe
// for that.
type Script func(Request) Reply

// Always answers every request with r.
func Always(r Reply) Script { return func(Request) Reply { return r } }

// Sequence answers the n-th request it sees (counted per Sequence) with
// replies[n-1]; once they run out the last one repeats. With no replies it
// answers 500.
func Sequence(replies ...Reply) Script {
	var n atomic.Int64
	return func(Request) Reply {
		if len(replies) == 0 {
			return Error(http.StatusInternalServerError)
		}
		i := int(n.Add(1)) - 1
		return replies[min(i, len(replies)-1)]
	}
}

// Delayed answers as s does, each answer held for d first ([Reply.Delay]):
// a deployment whose first content takes d.
func Delayed(d time.Duration, s Script) Script {
	return func(r Request) Reply {
		rep := s(r)
		rep.Delay = d
		return rep
	}
}

// ByModel answers each request with the script of its model. A model not
// in scripts gets 404 with the wire format's "model not found" error.
func ByModel(scripts map[string]Script) Script {
	return func(r Request) Reply {
		if s, ok := scripts[r.Model]; ok {
			return s(r)
		}
		return Reply{Fault: &Fault{
			Status:  http.StatusNotFound,
			Message: "llmtest: model " + strconv.Quote(r.Model) + " not found",
		}}
	}
}
