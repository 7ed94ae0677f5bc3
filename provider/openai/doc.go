// Package openai is the [agent.Provider] for the OpenAI Chat Completions API
// with tools, built on github.com/openai/openai-go/v3. It serves OpenAI and
// every server that speaks the same wire format: vLLM, the llama.cpp server,
// Ollama, LiteLLM and others (point [Config.BaseURL] at the server's /v1).
//
//	p, err := openai.New(openai.Config{
//		BaseURL: "http://localhost:8000/v1", // "" for api.openai.com
//		APIKey:  os.Getenv("OPENAI_API_KEY"),
//	})
//	if err != nil { ... }
//	resp, err := p.Complete(ctx, agent.Request{
//		Model:    "gpt-4o-mini",
//		Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}},
//	})
//
// # One attempt per call
//
// The SDK's own retries are off (it makes exactly one HTTP request per
// [Provider.Complete]) and the SDK adds no timeout of its own: the context
// bounds the call. Retrying is the job of the retry ladder (package retry).
//
// # Request mapping
//
//   - [agent.Request.Model] becomes "model".
//   - RoleSystem, RoleUser and RoleAssistant messages keep their place and role;
//     an assistant message's ToolCalls become "tool_calls" entries
//     {id, type "function", function {name, arguments}} in order, the arguments
//     sent as the JSON text of [agent.ToolCall.Arguments] ("{}" when empty).
//     An assistant message with no text and no tool calls is left out.
//   - A RoleTool message becomes a message with role "tool", its tool_call_id
//     and Content. The wire format has no error flag, so IsError is not sent:
//     the model reads the error text as the result.
//   - Each [agent.ToolSpec] becomes a "function" tool {name, description,
//     parameters}; empty Parameters mean no parameters.
//   - [agent.Request.MaxTokens] (else [Config.MaxTokens]) becomes
//     "max_completion_tokens" (or "max_tokens" with [Config.LegacyMaxTokens]);
//     when both are 0 nothing is sent and the server decides.
//
// # Response mapping
//
// The first choice's message becomes the [agent.Response] message: Content is
// the message text (its refusal when the text is empty) and ToolCalls are its
// tool calls in order, each with its id, function name and arguments. A tool call
// without an id (some compatible servers) gets "call_<index>". Arguments are kept
// byte for byte as the model wrote them, even when they are not valid JSON: the
// caller must check [encoding/json.Valid] before using them and can report bad
// arguments to the model as a soft error. Empty arguments stay empty. Usage is
// prompt_tokens and completion_tokens.
//
// # Errors
//
//   - An HTTP error status becomes a *retry.StatusError with the status code,
//     the provider's message, code and type, the rate-limit kind
//     (retry.LimitFor: insufficient_quota is a Quota, a 503 saying overloaded
//     an Overload, other 429s a Throttle; a Google-style "status" such as
//     RESOURCE_EXHAUSTED counts as the type when there is none) and the hint
//     of the response headers (retry.HintFromHeader: the later of
//     Retry-After and retry-after-ms, else x-ratelimit-reset-* of the
//     exhausted limit) as Hint and as RetryAfter, wrapping the SDK's
//     *openai.Error (or, when the error body is not the API's JSON, a plain
//     error).
//   - A connection error or timeout is returned as it is.
//   - When the context ends, the error satisfies errors.Is(err, ctx.Err()).
//   - A 2xx response that cannot be decoded, or that has no choices, wraps
//     [ErrBadResponse]; it is transient (never a 4xx StatusError).
//   - A request that cannot be built (no model, a tool schema that is not a
//     JSON object, an unknown role) is marked retry.Unrecoverable.
package openai
