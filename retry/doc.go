// Package retry is loopctl's retry ladder: optimism at millisecond scale,
// inside one call, before the breakers see the result.
//
// [Do] calls a function and retries it according to a [Policy]:
//
//   - Transient failures (connection errors, timeouts, HTTP 408 and 5xx, and
//     any error the ladder does not recognise) are retried with capped
//     exponential backoff and jitter ([Policy.Delay]); the budget is
//     [Policy.MaxRetries].
//   - Rate limits (HTTP 429) have a separate budget, [Policy.RateLimitRetries].
//     Each waits the server's Retry-After hint (capped) or a fixed delay, with
//     no jitter; one 429 past the budget escalates with an [*EscalationError]
//     so the caller (the model breaker) can record a rate limit and move on.
//   - Permanent failures (other 4xx, context.Canceled, errors marked with
//     [Unrecoverable]) are returned at once.
//
// Every wait races the context: cancellation is never retried and never
// waits out a delay, and a wait that would reach the context's deadline is
// not started.
//
// Adapters report HTTP failures as [*StatusError] values; [ParseRetryAfter]
// and [RetryAfterFromHeader] turn response headers into the hint it carries.
// [Classify] decides which rung of the ladder an error belongs to.
//
// The package keeps no state: a Policy is a plain value and Do is safe for
// concurrent use as long as the Policy's Rand and OnRetry functions are.
package retry
