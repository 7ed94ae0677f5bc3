// Package outage measures what a circuit breaker buys during an outage, instead of
// asserting it.
//
// [Simulate] runs a deterministic discrete-event simulation in virtual time: N callers
// each call one service on a schedule; the service is down for an outage window, and
// every attempt that reaches the dead service hangs for the full timeout and then fails.
// [DefaultScenario] is the source page's comparison; [ShortOutage] and [Flapping] (a
// service that comes back for less than a cooldown and goes down again) are the other
// named scenarios ([ScenarioNamed]). The same scenario runs under two policies:
//
//   - [PlainRetries]: every call goes through the retry ladder alone; every attempt
//     reaches the service.
//   - [WithBreaker]: the same ladder, but every attempt first asks one shared tool
//     breaker (package breaker) for a permit. A refused first attempt ends the call
//     at once (an agent routes around a refused tool instead of retrying it); an
//     allowed attempt settles its permit with its outcome, and the ladder still
//     retries transient failures of allowed attempts. A retry refused while the
//     breaker is half-open (its cooldown has passed; a probe is finding out) is
//     retried by the ladder like any transient error ([retry.Classify] classifies a
//     refusal as transient), while retries are left ([Metrics.RetriesRefused]); a
//     retry refused by an open breaker ends the call, failed. A probe's attempt is bounded by its lease, as
//     [breaker.Do] bounds it ([breaker.Permit.Deadline]): it hangs at most until the
//     lease ends, and then fails, dated at the lease end.
//
// The breaker is the real [breaker.Breaker], driven by a virtual clock through
// [breaker.Settings.Now]. The ladder's arithmetic and classification are the real ones
// ([retry.Policy.Delay] for every backoff wait, [retry.Classify] on every failure);
// only [retry.Do] is not used, because it sleeps on a real timer.
//
// # Model
//
// Each caller has at most one call in flight: a caller that is still waiting when its
// next tick comes skips that tick (counted in [Metrics.Skipped]) and calls again at the
// first tick after its call ends. Caller phases are drawn from a PCG seeded with
// [Scenario.Seed], so both policies see the same callers. Each backoff's jitter is drawn
// from a PCG keyed by the seed, the caller, its call and the retry, so the same retry of
// the same call waits the same under both policies (common random numbers: a refusal in
// one run does not shift the waits of every later retry). Events are ordered by virtual time, ties by the
// order in which they were scheduled, so a run is a pure function of its [Scenario].
//
// Whether an attempt hangs is decided when it reaches the service: an attempt that
// arrives during the outage hangs for [Scenario.Timeout] and fails even if the service
// is fixed meanwhile (the connection it holds is dead); an attempt that arrives after the
// fix succeeds after [Scenario.Latency].
//
// Calls are concurrent in virtual time, so when the breaker trips many attempts are
// still hanging. Their failures arrive later and, as the breaker's semantics require,
// count as fresh bad news unless a call that started after them has already succeeded
// (then they are stale and the breaker ignores them: [Metrics.StaleFailures]). A fresh
// one pushes the next probe back only when the cooldown from its date has not passed
// ([Metrics.LateFailures]; a timeout is dated at its attempt's start), and one that
// arrives while a probe is in flight re-opens the half-open breaker, so that probe's
// verdict no longer counts ([Metrics.ProbesDisplaced]). The simulation measures them
// rather than working around them.
//
// # Recovery
//
// The fix is the end of the (last) outage window. [Metrics.FirstSuccess] is the time from the
// fix until the first attempt succeeds. [Metrics.FullFlow] is the time from the fix until
// traffic flows fully again: the instant of the last bad outcome (an attempt failing
// after hanging on the dead service, or a refusal), after which every attempt reaches the
// service and succeeds. For plain retries that is when the backlog of hanging attempts
// drains; with the breaker it is also when the breaker stops refusing.
//
// [Result.Rows] (and the table [Result.WriteTable] prints) names the winner of every
// row that scores the policies.
//
// # Brownouts
//
// [SimulateBrownout] runs a partial outage ([BrownoutScenario], SEMANTICS §8): a
// service that fails 3 calls in 10 without ever failing two in a row ([Failing]), or
// answers every call slowly ([Slow]), so the consecutive rule never trips. Two breakers
// run it side by side, consecutive-only and with the failure-rate window and the
// slow-call rule ([breaker.Settings.FailureRate], [breaker.Settings.SlowCallAfter]); a
// refused call is served by a healthy backup, and [BrownoutResult.Rows] names the winner
// of every row that scores them.
package outage
