// Package breaker is a per-tool circuit breaker: it turns a tool that keeps
// failing into fast, soft refusals, and later lets exactly one call through to
// test whether the tool came back.
//
// A [Breaker] has three states. In [Closed] calls flow and consecutive failures
// are counted; the FailureThreshold-th consecutive failure trips it to [Open].
// In Open every call is refused with an [*OpenError] (which satisfies
// errors.Is(err, [ErrOpen])) until RecoveryDuration has passed since the last
// failure; the next gate call then moves the breaker to [HalfOpen] and becomes
// the probe. The probe's success closes the breaker; any failure re-opens it
// with a fresh cooldown. The probe holds a lease of ProbeTimeout: if it never
// reports, the breaker re-opens as if the probe had failed at the lease's end.
// A probe's call never outlives its lease: [Permit.Deadline] returns the lease
// end, and [Do] runs a probe's function under a context that ends there.
//
// The gate, [Breaker.Allow], hands out a [Permit] that remembers the generation
// it was issued in and whether it holds the probe slot, so only the probe's
// verdict can close a half-open breaker; successes that started before a trip
// are ignored. Outcomes are ordered by when their calls started: a failure is
// fresh bad news unless it is stale, its call having started before the call
// of a counted success (one that reset a nonzero failure count, or the probe's
// success); a stale failure changes nothing, so calls that hung through an
// outage cannot trip or re-open a breaker that a newer call proved healthy.
// [Breaker.Reset] closes the breaker by hand. A cancelled call
// ([Permit.Cancel], or [Permit.Done] with context.Canceled) carries no verdict
// and frees the probe slot it held. [Breaker.WouldAllow], [Breaker.State] and
// [Breaker.Snapshot] are pure: they never change anything, so dashboards can
// poll them without stealing the probe.
//
// A timeout ([Permit.TimeoutAfter], with how long the call ran) is dated at its
// call's start, not its end, so calls that hung through an ended outage trip a
// breaker dated inside it.
//
// Beside the consecutive count, an opt-in failure-rate window
// (Settings.FailureRate, RateWindow, RateMinCalls) trips a closed breaker when
// the share of failures over a recent window reaches a threshold, and an
// opt-in slow-call rule (SlowCallAfter, SlowCallRate) does the same for the
// share of successes whose first content came late ([Permit.SuccessAfter]).
// The window acts only in Closed and is cleared on every transition out of it.
//
// Repeated trips back off (opt-in, Settings.RecoveryBackoff): the breaker
// counts its openings (the trip count n, [Snapshot.Trips]: a trip, a failed,
// slow or lapsed probe), and the opening that makes it n waits
// RecoveryDuration × RecoveryBackoff^(n−1), capped at MaxRecoveryTimeout, so
// a brownout that re-trips the breaker each time it recovers is probed ever
// less often; the count starts again once the breaker has stayed closed for
// MaxRecoveryTimeout. With SlowCallAfter set, a probe whose first content came
// later re-opens the breaker (the caller was served): recovery must be proven
// fast. [Permit.RateLimited] and [Permit.QuotaExhausted] open the breaker at
// once until the provider's hint (a quota without one: QuotaCooldown), without
// counting a trip; [Snapshot.OpenUntil] and [Snapshot.Cause] say when and why
// the cooldown ends. [Breaker.Reconfigure] changes the settings in place,
// keeping the state and n.
//
// Time-based transitions are computed lazily when the breaker is next used;
// there are no goroutines or timers, and the window's buckets roll when
// touched. The closed path (Allow, then Success with no failures counted)
// reads no clock, takes no lock and does not allocate; a rate window adds one
// clock read per verdict. Refusals are lock-free and do not allocate.
//
// The exact transition table is in docs/SEMANTICS.md, section 1; the rate
// window and the closed path's cost in section 8; the backoff, the slow probe
// and the rate-limit verdicts in section 9.
package breaker
