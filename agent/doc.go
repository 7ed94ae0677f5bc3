// Package agent runs an LLM agent loop that keeps working when the things it
// calls break.
//
// An [Agent] composes the pieces of loopctl (docs/SEMANTICS.md, section 6):
//
//   - per turn (one model request): the model breaker's gate
//     ([fallback.Manager.Begin]: cooldown check, routing, exhaustion), the retry
//     ladder ([retry.Do]) around the request to the routed model, and the verdict
//     on the turn ticket;
//   - per tool call: the router ([health.Router.Resolve], pure reads), the tool
//     breaker's gate on the resolved tool ([health.Registry.Allow]; a refusal
//     becomes a soft error and is not recorded as a failure), the call itself
//     (with a timeout and panic isolation), and the verdict on the permit.
//
// Soft errors (a refused, unknown, failing, panicking or hanging tool, or bad
// arguments) become tool results flagged with [Message.IsError]: the run goes
// on and the model reads the text and adapts. Hard errors (the fallback chain is
// exhausted, a turn failed on every model it was allowed to try, the caller
// cancelled, the turn limit was reached) end the run and are returned as a
// [*RunError].
//
// The texts the model reads for soft errors (x is the tool the model asked
// for, or for a panic or a timeout the tool that ran, which differs when the
// router picked a backup):
//
//	tool temporarily unavailable: circuit breaker open for tool 'x'; retry in 30s; backup tools: y (unavailable)
//	tool temporarily unavailable: circuit breaker open for tool 'x'; retry in 30s; no backup tool
//	tool 'x' is not available; available tools: a, b
//	<the tool's error text>
//	tool 'x' panicked: <the panic value>
//	tool 'x' timed out after 30s
//	invalid arguments for tool 'x': <why>
//
// A refusal, an unknown tool and bad arguments touch no breaker: bad arguments
// are the model's mistake, not the tool's. An error, a panic and a timeout
// (the tool failed after its timeout, Tool.Timeout or Config.ToolTimeout,
// passed, or its probe's lease ended) are failures for
// the tool's breaker. A tool that returns a result is a success, even if it
// returned after its deadline. When the caller cancels, the calls in flight get
// "tool 'x' was cancelled" (so the conversation can be resumed) and no verdict.
// When the caller's deadline passes instead, a call still running is a failure
// ("tool 'x' timed out after <how long it ran>"): a tool that hangs until the
// caller's deadline is exactly the failure the breaker exists for. The same
// holds for a model request cut by the caller's deadline.
//
// Within a turn, a failed attempt is tried again on whatever the model breaker
// routes to next, up to Config.TurnAttempts (by default enough to walk the
// whole chain once). The verdicts follow docs/SEMANTICS.md section 4: a
// request the provider rejects as malformed (HTTP 400, 413, 422) carries no
// verdict against the model and ends the run with ErrTurnFailed, whose text
// carries the provider's own message and code (e.g. context_length_exceeded);
// every other failure, including 401, 403 and 404 (that model cannot be used
// with these credentials or that name), is a Transient failure of the model
// that served the attempt, and the turn moves on. A permanent error (an HTTP
// 4xx other than 408 and 429, see [retry.Classify]) is never repeated on the
// same model in that turn.
//
// A turn's attempts share one
// [fallback.Attempts] and go through [fallback.Manager.Next], so that a turn
// fails over rather than waits (docs/SEMANTICS.md section 7). While another
// model is usable the ladder runs with [retry.Policy.Failover]: the first
// rate limit (any kind) or timeout ends the attempt at once and the turn moves
// on (TurnRecord.FailedOver, Event.FailedOver); fast 5xx keep their retries.
// A turn holds at most one probe; a failed probe falls through to the chain.
// Verdicts carry the kind (Quota trips at once), the provider's hint and
// timeouts (dated at the attempt's start: Failure.Elapsed). Each
// same-model retry or rate-limited wait of the ladder spends a token of the
// model's retry budget ([fallback.Ticket.Retry] as [retry.Policy.Budget];
// Models.RetryBudget, SEMANTICS §8.3): with none left, the attempt ends with
// its failure and the turn moves on. When no other model is usable a
// rate limit ends the turn with ErrTurnFailed wrapping it, after waiting no
// longer than the run's context deadline allows. Hedging is not done by the
// agent (Models.HedgeAfter is ignored): Provider.Complete returns only the
// whole response, so there is no first byte to race on.
//
// Probes are bounded by their lease (docs/SEMANTICS.md sections 1, 3 and 6):
// a tool call that is its breaker's recovery probe runs under the earlier of
// the tool's timeout and the lease end ([breaker.Permit.Deadline]), and a turn
// that is the model breaker's probe sends its requests under the ticket's
// lease ([fallback.Ticket.Deadline]); the time left is read on the breakers'
// clocks (Settings.Now). A probe cut at its lease is a failure. A failed tool
// probe falls through once to a usable backup unless the tool is
// [Tool.NotIdempotent] (see [NewTool]).
//
// Every run has an id (Result.RunID, Event.RunID, [RunIDFromContext]); the
// Logger gets each run's records with the run's context.
//
// Breaker state belongs to the Agent, not to a run: it outlives a failed run and
// is shared by every concurrent [Agent.Run]. Cancellation (context.Canceled)
// never counts against either breaker.
package agent
