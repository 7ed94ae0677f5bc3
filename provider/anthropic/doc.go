// Package anthropic is the [agent.Provider] for the Anthropic Messages API
// with tools, built on github.com/anthropics/anthropic-sdk-go/v2.
//
//	p, err := anthropic.New(anthropic.Config{
//		APIKey:    os.Getenv("ANTHROPIC_API_KEY"),
//		MaxTokens: 2048, // 0: 4096
//	})
//	if err != nil { ... }
//	resp, err := p.Complete(ctx, agent.Request{
//		Model:    "claude-sonnet-4-5",
//		Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}},
//	})
//
// # One attempt per call
//
// The SDK's own retries are off (it makes exactly one HTTP request per
// [Provider.Complete]) and its default 10-minute request timeout is replaced
// by none: the context bounds the call. Retrying is the job of the retry
// ladder (package retry).
//
// # Request mapping
//
//   - [agent.Request.Model] becomes "model"; [agent.Request.MaxTokens] (else
//     [Config.MaxTokens], else 4096) becomes "max_tokens", which the API requires.
//   - Every RoleSystem message, wherever it is, is lifted into the "system"
//     parameter as one text block, in order.
//   - A RoleUser message becomes a user message with one text block.
//   - A RoleAssistant message becomes an assistant message with a text block
//     (when Content is not empty) followed by one tool_use block
//     {id, name, input} per tool call, in order. Input is the call's Arguments
//     when they are a JSON object, else {} (the API accepts only objects; the
//     loop has already told the model its arguments were bad). An assistant
//     message with no text and no tool calls is left out.
//   - A RoleTool message becomes a tool_result block {tool_use_id, is_error,
//     content [text]} (no content when Content is empty). Consecutive tool
//     results go into one user message, as the API requires, and a user
//     message right after them joins that message (after the results); in
//     general, consecutive messages of the same role are merged.
//   - Each [agent.ToolSpec] becomes a custom tool {name, description,
//     input_schema}; empty Parameters mean {"type":"object","properties":{}}.
//
// # Response mapping
//
// The text blocks of the answer, concatenated, become Content; its tool_use
// blocks become ToolCalls in order, each with its id, name and input (the JSON
// object, byte for byte). Other blocks (thinking, server tools) are ignored.
// Usage is input_tokens and output_tokens as reported (cache tokens are not
// added in).
//
// # Errors
//
//   - An HTTP error status becomes a *retry.StatusError with the status code,
//     the provider's message, code and type, the rate-limit kind
//     (retry.LimitFor: 529 and overloaded_error are an Overload, other 429s a
//     Throttle) and the hint of the response headers (retry.HintFromHeader:
//     the later of Retry-After and retry-after-ms, else
//     anthropic-ratelimit-*-reset of the exhausted limit)
//     as Hint and as RetryAfter, wrapping the SDK's *anthropic.Error. An
//     Overload is transient to the ladder (without Policy.Failover).
//   - A connection error or timeout is returned as it is.
//   - When the context ends, the error satisfies errors.Is(err, ctx.Err()).
//   - A 2xx response that cannot be decoded, or that has no "content", wraps
//     [ErrBadResponse]; it is transient (never a 4xx StatusError).
//   - A request that cannot be built (no model, a tool schema that is not a
//     JSON object, an unknown role) is marked retry.Unrecoverable.
package anthropic
