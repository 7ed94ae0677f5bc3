// Package llmtest is a scripted fake model server for tests and demos. It
// speaks the OpenAI wire ([NewOpenAI]: Chat Completions, the Responses API
// and embeddings) and the Anthropic Messages wire ([NewAnthropic]: messages
// and count_tokens) on a loopback httptest server, so the real provider adapters (and their SDKs) can be
// driven through every path: text answers, tool calls, HTTP errors with
// Retry-After hints, malformed bodies, reset connections and requests that
// hang until the client gives up.
//
// A request with "stream": true on the OpenAI wire is answered with
// server-sent events (chat.completion.chunk, as OpenAI sends them): a
// role-only first chunk (unless [Reply.NoRole]), one chunk per entry of
// [Reply.Chunks] (see [Chunked]), a tool-call chunk, a finish chunk and
// "data: [DONE]". A [StreamFault] breaks the stream at a chosen event: cut
// before it or in its middle, reset the connection, stall until the client
// gives up, pause until a test resumes it, send malformed JSON, end with
// an error event (an overloaded_error one, too), or end cleanly without the
// stream's end marker. Streams on the other wires are sent as the services
// send them: Responses API events (response.created ... response.completed,
// text and function-call deltas) and Messages events (message_start ...
// message_stop, text and tool_use blocks), with the same faults and each
// wire's own error events; [Request.Endpoint] says which endpoint a request
// came to.
//
// Each request is decoded into a [Request] (model, conversation, tools),
// checked against the wire format's rules the real services enforce (a bad
// conversation gets the 400 a real server would send, without calling the
// script), logged, and answered by a [Script]:
//
//	srv := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
//		"primary": llmtest.Always(llmtest.Error(503)),
//		"backup": llmtest.Sequence(
//			llmtest.Calls(llmtest.Call("search", `{"q":"go"}`)),
//			llmtest.Text("done"),
//		),
//	}))
//	defer srv.Close()
//	p, _ := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
//	// ... run the agent against p ...
//	fmt.Println(srv.Count("primary"), srv.Count("backup"))
//
// For a pool of deployments of one model, start one server per deployment
// (each its own listener and key): [Delayed] makes a deployment slow to first
// content ([Reply.Delay]), and [Limits] enforces a rate limit and announces
// it in the wire's headers on every answer (OpenAI's x-ratelimit-*,
// Anthropic's anthropic-ratelimit-*), as the services do; [Reply.Header]
// adds any other header.
//
// The package does not depend on the agent package, so any test package can
// use it.
package llmtest
