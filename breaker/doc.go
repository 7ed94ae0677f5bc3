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
// Time-based transitions are computed lazily when the breaker is next used;
// there are no goroutines or timers. The closed path (Allow, then Success with
// no failures counted) and refusals are lock-free and do not allocate.
//
// The exact transition table is in docs/SEMANTICS.md, section 1.
package breaker
