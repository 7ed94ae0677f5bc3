// Package fallback is the model breaker: it keeps an agent's turns flowing when
// its primary model keeps failing, by routing them to a chain of backup models
// and, after a cooldown, carefully probing the primary until it has proven that
// it recovered.
//
// A [Manager] is a three-state machine:
//
//   - [Primary]: turns go to the primary model; consecutive failed turns are
//     counted, and the TripThreshold-th one trips the manager.
//   - [Fallback]: turns go to the active chain entry, the first entry that is
//     neither disabled with [Manager.SetAvailable] nor out of strikes (each entry
//     may fail MaxFailCount turns). When every entry is spent, [Manager.Begin]
//     fails fast with [ErrExhausted]. A manager with no chain never exhausts: it
//     keeps serving the primary, and the trip is only bookkeeping.
//   - [Recovering]: once RecoveryTimeout has passed since the trip, the next turn
//     is a probe of the primary. At most one probe is in flight at a time; other
//     turns started meanwhile are served by the chain. RecoverySuccessesNeeded
//     consecutive probe successes return to Primary; a rate-limited probe re-trips
//     at once, and TripThreshold consecutive transient probe failures re-trip too.
//
// Each turn starts with [Manager.Begin], which applies every due transition,
// routes the turn and returns a [Ticket] ticket naming the model to call. The caller
// settles the ticket exactly once with [Ticket.Success], [Ticket.Failure] or
// [Ticket.Cancel]. The verdict applies to the model that served the ticket, and
// results of tickets issued before the latest state change never close or re-open
// anything, so concurrent turns cannot confuse the machine. A failed turn on the
// primary whose ticket was issued before a counted success's ticket (one that
// reset a nonzero streak, or a probe success) is stale and changes nothing:
// turns that hung through an outage cannot trip a primary a newer turn proved. A probe ticket holds a
// lease (ProbeTimeout): a probe that is never settled frees its slot when the lease
// ends and counts as one transient probe failure at the lease end. The caller
// bounds the probe turn's request by the lease end, [Ticket.Deadline].
//
// Failures carry time, so that an outage that has ended stops counting.
// [Ticket.Fail] reports a failure with its kind
// ([Quota] trips the primary at once), the provider's hint (the cooldown
// ends no earlier than the latest hint of the streak that tripped) and
// whether it timed out (a timeout is dated at its call's start, so calls
// that hung through an outage that has ended do not hold the primary open).
// A turn that makes several attempts (a gateway request, an agent turn)
// passes one [Attempts] to [Manager.Next]: it holds at most one probe ticket,
// and it routes past the models that failed it slowly (a timeout or a rate
// limit); [Attempts.Usable] tells the retry ladder whether another model is
// usable, and [Manager.Hedge] hands out hedge tickets within a budget.
//
// A partial outage (a primary that fails a share of its calls, never enough
// in a row) trips a window rather than the consecutive count. With FailureRate set, a window of
// the primary's own verdicts in Primary (RateWindow, ten lazy buckets) trips
// the manager, as the consecutive count does, once it holds RateMinCalls
// verdicts and the share of failures reaches FailureRate; with SlowCallAfter
// and SlowCallRate set, successes reported by [Ticket.SuccessAfter] with a late
// first content count as slow calls and trip at their own rate. Every
// transition out of Primary clears the window. Each model has a retry budget
// (RetryBudget tokens per turn that reaches it, RetryBudgetBurst at most): a
// same-model retry of the ladder spends a token with [Ticket.Retry] (or
// [Manager.Retry]), and with none left it is not made. Begin in Primary reads
// no clock: a timeout reports how long its call ran ([Failure].Elapsed) and
// is dated at now − Elapsed. With a [Backend] the window and the budgets are
// kept per process, and a window's trip is written through the backend
// ([OutcomeTrip]).
//
// Repeated trips back off. Every opening that a failing primary caused raises
// the trip count n ([Snapshot].Trips; a quota, a rate-limited probe's
// immediate re-trip and a hold do not), and with RecoveryBackoff f set the
// opening that makes n = k waits min(RecoveryTimeout × f^(k−1),
// MaxRecoveryTimeout) instead of RecoveryTimeout (cause [CauseBackoff]), so
// a brownout that re-trips each time the manager closes is probed ever less
// often; after MaxRecoveryTimeout in Primary the count starts again. A probe
// whose first content came later than SlowCallAfter ([Turn.SuccessAfter])
// re-opens the manager at once: recovery must be proven fast. The turn was
// served all the same.
//
// Time transitions are computed lazily from Settings.Now when the manager is
// touched; there are no goroutines or timers. The pure reads ([Manager.State],
// [Manager.ActiveModel], [Manager.Snapshot], [Manager.FallbackActivated]) change
// nothing. Transition callbacks run outside every lock, in order.
//
// The normative semantics are sections 3, 7, 8 and 9 of the repository's
// docs/SEMANTICS.md.
package fallback
