// Package gateway is loopctl's gateway: an http.Handler that puts the model
// breaker (package fallback) and the retry ladder (package retry) in front
// of OpenAI-compatible and Anthropic upstreams, so that a client in any
// language gets them by pointing its base URL at it.
//
// # Reading the code: one request's path
//
// A request in flight is an exchange in three parts, split by lifetime:
// its intake (what the gateway decided before the first attempt, read-only
// after), its walk (the attempts over the route's candidates and what each
// did) and its reply (what was written beyond the answer). The words are
// those of the repository's docs/ARCHITECTURE.md.
//
//  1. [Gateway.ServeHTTP] (serve.go) applies the doors (admit) and picks the
//     endpoint (endpoint.go: chat, responses, messages, embeddings,
//     count_tokens); a model endpoint goes to serveWire (exchange.go).
//  2. serveWire does the intake: the client's key, the body within
//     limits.max_body (readBody in intake.go, bytebudget.go), what the body
//     says (scan.go: model, stream, previous_response_id), and the route
//     and attempt budget (route in intake.go).
//  3. run (exchange.go) walks the attempt budget: each attempt begins a
//     ticket of the model breaker (breaker.go) naming a candidate; pick
//     passes or stops at candidates by what the walk knows (walk.go);
//     attempt translates the body when the candidate speaks another wire
//     (translate.go, package gateway/internal/wire) and sends it through
//     the retry ladder (send, upstream.go; the retry budget:
//     retrybudget.go) under the attempt's clock (clock.go) and the
//     request's deadline (deadline.go); hedge.go races a second candidate.
//     A ticket naming a pool entry (pool/<name>; pools.go builds them) runs
//     one pool attempt (pool_walk.go): the pool chooses a member, which is
//     sent the request through the same attempt path, and a member's
//     failure before content moves on to the next member at once; the
//     served member's attempt is settled with the ticket (pool_ticket.go),
//     and the model breaker sees the pool attempt's one verdict.
//     post (post.go) authenticates each upstream request (auth.go: static
//     keys, SigV4, Google tokens, Entra ID tokens: azureauth.go, a token
//     helper) and, for Bedrock and
//     Vertex AI (cloud.go: paths and body rules; clouderrors.go: their
//     errors; eventstream.go: Bedrock's frames as Messages SSE), speaks the
//     cloud's differences from Anthropic's API (docs/GATEWAY.md §10).
//  4. send reads the answer up to the commit point: a whole body
//     (bytebudget.go), or a stream's first content (stream.go), translated
//     when the request was.
//  5. conclude (exchange.go) settles the ticket: a served answer is written
//     (answer.go) or pumped event by event (pump.go); a failure gets its
//     verdict (verdict.go, one classifier: retry.LimitOf) and the next
//     attempt runs; a request no candidate served gets the wire's error
//     (answer.go: fail, exhausted; localerror.go) in the client's own
//     shape (endpoint.go).
//  6. done (answer.go) counts it (metrics.go) and logs one line.
//
// A [Gateway] is built from a [Config] (parsed from YAML with [ParseConfig]
// or [LoadConfig], or built in Go) and serves:
//
//   - POST /v1/chat/completions, streaming and not: the body is forwarded
//     unchanged except "model", which becomes the routed upstream model.
//     Each request gets an attempt budget (by default enough to walk the
//     fallback chain once); each attempt goes where the model's breaker
//     routes it, through the retry ladder. Responses carry
//     x-loopctl-model (the upstream/model that served, or failed last) and
//     x-loopctl-attempts (attempts made: turns of the model breaker, each
//     through the retry ladder). A model named upstream/model goes
//     to that model directly, with its own breaker and no chain.
//   - POST /v1/responses (the Responses API), POST /v1/messages and
//     /v1/messages/count_tokens (Anthropic's Messages API) and POST
//     /v1/embeddings, the same way (docs/GATEWAY.md §6): an upstream has a
//     wire (Upstream.API: [APIOpenAI], or [APIAnthropic], [APIBedrock] and
//     [APIVertex] for Messages), errors come in
//     the wire's own shape, each wire's stream commits at its first content
//     and ends with its own end marker, and a Responses request with
//     previous_response_id is pinned to the upstream model that produced it
//     ([ResponseStore]).
//   - Every model on the three client wires, whatever its entries' wires
//     (docs/GATEWAY.md §8): a request whose wire the routed entry speaks is
//     forwarded unchanged but "model"; any other is translated into a wire
//     the entry speaks, and the answer or stream back into the client's
//     (x-loopctl-translated). Embeddings only by openai entries.
//   - GET /v1/models, /v1/models/{id}, /healthz, /readyz, /metrics
//     (Prometheus) and /dashboard/ (a live page of every model breaker,
//     package dashboard).
//   - GET /admin/breakers[/{model}] (every model breaker: why and until when
//     it is open, [BreakerView]) and POST /admin/breakers/{model} (hold,
//     release, reset, disable or enable a chain entry), behind admin_keys
//     (docs/GATEWAY.md §9.1, §9.2).
//
// Failures reach the client in the wire's error shape (OpenAI's here;
// Messages: Anthropic's, with 529 overloaded_error for a spent chain): 502 upstream_error
// when no model could serve, 429 rate_limit_error and 503
// fallback_exhausted with Retry-After (whole seconds until the primary may
// be probed), the upstream's own 400, 413 and 422 unchanged (they carry no
// verdict against the model), 401 for a missing or wrong client key.
//
// Streams are flushed event by event. Before the first content chunk the
// gateway holds back only role-only and empty chunks (at most 16 events,
// 64 KiB, and timeouts.first_byte), so an upstream that fails before it
// fails over invisibly; after it the gateway never switches models: a
// broken stream (one whose body ends without its end marker, too) ends
// with the wire's error event (chat: data: {"error": ...} and no [DONE]),
// and counts as a failure of the model that served it. A client
// that goes away cancels the upstream request and counts nothing.
//
// The normative description is the repository's docs/GATEWAY.md.
package gateway
