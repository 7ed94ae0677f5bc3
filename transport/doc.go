// Package transport puts loopctl's tool breaker and retry ladder under any
// HTTP client: [New] returns an [http.RoundTripper] that a client built on
// net/http (openai-go with option.WithHTTPClient, anthropic-sdk-go, or a plain
// [http.Client]) sends its requests through.
//
// Each request is keyed (by default by its host; Settings.Key can add the
// model, the path, a tenant) and goes through that key's breaker, kept in a
// [health.Registry]. A refused request never reaches the network: RoundTrip
// returns an [*OpenError], which satisfies errors.Is(err, breaker.ErrOpen)
// and wraps the breaker's [*breaker.OpenError] (RetryIn says when the next
// probe may go). A granted request is sent; a failed attempt is retried by
// the ladder of package retry (transient failures with backoff, 429 on its
// own budget honouring Retry-After), with the request body replayed through
// Request.GetBody. A request whose body cannot be replayed (a non-nil Body
// without GetBody) is sent once.
//
// The ladder honours the kinds and hints of SEMANTICS §4: each error
// answer's hint comes from its headers (retry.HintFromHeader), and for 403,
// 429 and 5xx its kind (retry.LimitFor) from the status and the provider's
// error type, code and message, read ahead from up to 16 KiB of the body (the
// caller still reads the body whole). A Quota is not retried; a Throttle
// waits its hint within MaxRateLimitDelay, RateLimitWait and the request's
// deadline; an Overload takes the transient backoff; with Retry.Failover the
// first rate limit and the first timeout end the ladder at once. The answer
// is returned as it is, so openai.MapError / anthropic.MapError read the same
// kind and hint; when RoundTrip returns an error instead, errors.As finds the
// *retry.StatusError with its Limit and Hint (retry.LimitOf).
//
// The breaker's verdict follows SEMANTICS:
//
//   - 1xx, 2xx, 3xx: a success, counted when the caller has read the body to
//     its end (io.EOF, or all of Content-Length). A read error is a failure;
//     a Close before the end is a cancel (no verdict), as is the caller's
//     own cancellation;
//   - 400, 413 and 422: no verdict: the request was malformed, not the host;
//   - 401, 403, 404, every other 4xx, 429 after the ladder gave up, and 5xx:
//     a failure;
//   - no response (connection refused or reset, a timeout): a failure;
//     the caller's cancellation: no verdict.
//
// The last response is returned to the caller as it is, error statuses
// included, so an SDK still reads the provider's error body; intermediate
// responses of retried attempts are drained and closed. Response bodies,
// streams included, are passed through unbuffered: every Read goes straight
// to the upstream body.
//
// A probe (the one request a half-open breaker lets through) is bounded by
// its lease: its context ends at the earlier of the caller's deadline and the
// lease end, through the retries and the reading of the body, so a hanging
// upstream frees the caller when the breaker has already given up on it.
//
// Retries are bounded by a retry budget per key (SEMANTICS §8.3):
// each request adds Settings.RetryBudget (default 0.2) to its key's budget,
// which starts full at Settings.RetryBudgetBurst (default 10), and each retry
// or rate-limited wait of the ladder spends one; with less than one token the
// ladder stops and the last answer is returned. A host failing a share of its
// requests then receives at most that share of extra load. A negative
// RetryBudget turns the budget off.
//
// Set the SDK's own retries to zero (option.WithMaxRetries(0)): the ladder
// here retries, and an SDK retrying on top would multiply the attempts and
// retry refusals.
package transport
