package fallback_test

import (
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// The exported API exactly as docs/API.md states it: this file stops compiling
// if a signature drifts.
var (
	_ fallback.State              = fallback.Primary
	_ fallback.State              = fallback.Fallback
	_ fallback.State              = fallback.Recovering
	_ func(fallback.State) string = fallback.State.String
	_ fallback.Kind               = fallback.Transient
	_ fallback.Kind               = fallback.RateLimit
	_ error                       = fallback.ErrExhausted

	_ = fallback.Settings{
		Primary:                 "",
		Chain:                   []string{},
		TripThreshold:           0,
		RecoveryTimeout:         time.Duration(0),
		RecoverySuccessesNeeded: 0,
		MaxFailCount:            0,
		ProbeTimeout:            time.Duration(0),
		Now:                     func() time.Time { return time.Time{} },
		OnTransition:            func(fallback.Transition) {},
	}
	_ = fallback.Transition{
		From: fallback.Primary, To: fallback.Fallback,
		FromModel: "", ToModel: "",
		At: time.Time{},
	}
	_ func(fallback.Settings) (*fallback.Manager, error) = fallback.New

	_ func(*fallback.Manager) (fallback.Ticket, error) = (*fallback.Manager).Begin
	_ func(*fallback.Manager) string                   = (*fallback.Manager).ActiveModel
	_ func(*fallback.Manager) fallback.State           = (*fallback.Manager).State
	_ func(*fallback.Manager) bool                     = (*fallback.Manager).FallbackActivated
	_ func(*fallback.Manager, string, bool) error      = (*fallback.Manager).SetAvailable
	_ func(*fallback.Manager)                          = (*fallback.Manager).Reset
	_ func(*fallback.Manager) fallback.Snapshot        = (*fallback.Manager).Snapshot

	_ = fallback.Snapshot{
		State:               fallback.Primary,
		ConsecutiveFailures: 0,
		ProbeSuccesses:      0,
		TrippedAt:           time.Time{},
		FallbackActivated:   false,
		Chain:               []fallback.Entry{},
	}
	_ = fallback.Entry{Model: "", Attempts: 0, Available: false, Failed: false}

	_ func(fallback.Ticket) string                   = fallback.Ticket.Model
	_ func(fallback.Turn) string                     = fallback.Turn.Model // the deprecated name, kept one release
	_ func(*fallback.Manager) (fallback.Turn, error) = (*fallback.Manager).Begin
	_ func(fallback.Ticket) bool                     = fallback.Ticket.IsProbe
	_ func(fallback.Ticket)                          = fallback.Ticket.Success
	_ func(fallback.Ticket, fallback.Kind)           = fallback.Ticket.Failure
	_ func(fallback.Ticket)                          = fallback.Ticket.Cancel
	_ func(fallback.Ticket)                          = fallback.Ticket.Skip

	// Revision 2 additions.
	_ func(fallback.Ticket) (time.Time, bool) = fallback.Ticket.Deadline

	// Revision 3 additions.
	_ fallback.Kind                                                                        = fallback.Quota
	_                                                                                      = fallback.Failure{Kind: fallback.Quota, Hint: time.Time{}, Timeout: false}
	_ func(fallback.Ticket, fallback.Failure)                                              = fallback.Ticket.Fail
	_                                                                                      = fallback.Settings{QuotaCooldown: time.Duration(0), HedgeAfter: time.Duration(0), HedgeBudget: 0.0}
	_ func(*fallback.Manager, *fallback.Attempts) (fallback.Ticket, error)                 = (*fallback.Manager).Next
	_ func(*fallback.Attempts, *fallback.Manager) bool                                     = (*fallback.Attempts).Usable
	_ func(*fallback.Attempts, *fallback.Manager, string) error                            = (*fallback.Attempts).RoutePast
	_ func(*fallback.Attempts, *fallback.Manager) (string, bool)                           = (*fallback.Attempts).NextModel
	_ func(*fallback.Manager, *fallback.Attempts, fallback.Ticket) (fallback.Ticket, bool) = (*fallback.Manager).Hedge
	_                                                                                      = fallback.Snapshot{CooldownEnds: time.Time{}, CooldownCause: fallback.CauseRecoveryTimeout}
	_ fallback.Cause                                                                       = fallback.CauseHint
	_ fallback.Cause                                                                       = fallback.CauseQuota
	_ func(fallback.Cause) string                                                          = fallback.Cause.String

	// Revision 4 additions (SEMANTICS §8).
	_ = fallback.Settings{
		FailureRate: 0.0, RateWindow: time.Duration(0), RateMinCalls: 0,
		SlowCallAfter: time.Duration(0), SlowCallRate: 0.0,
		RetryBudget: 0.0, RetryBudgetBurst: 0.0,
	}
	_ func(fallback.Ticket, time.Duration) = fallback.Ticket.SuccessAfter                // §8.2: the slow-call report
	_                                      = fallback.Failure{Elapsed: time.Duration(0)} // §8.4: a timeout's duration
	_ func(fallback.Ticket) bool           = fallback.Ticket.Retry                       // §8.3: the retry budget
	_ func(*fallback.Manager, string) bool = (*fallback.Manager).Retry
	_ fallback.Outcome                     = fallback.OutcomeTrip // a window's trip through a Backend

	// Additions in this repository (rev 3).
	_ = fallback.ExhaustedError{Probed: true, ProbeFailure: fallback.Failure{}}
	_ = fallback.SharedTurn{Issued: time.Time{}, Uncounted: false}
	_ = fallback.DefaultQuotaCooldown
	_ = fallback.DefaultHedgeBudget

	// Revision 4 additions (API.md): the manual hold of GATEWAY §9.2.
	_ func(*fallback.Manager, time.Time, string) = (*fallback.Manager).Hold
	_ func(*fallback.Manager)                    = (*fallback.Manager).Release
	_ fallback.Cause                             = fallback.CauseManual

	// Additions in this repository (rev 4, GATEWAY §9.2, §9.3).
	_ func(*fallback.Manager, string, time.Time, string) error = (*fallback.Manager).Disable
	_ func(*fallback.Manager, string) error                    = (*fallback.Manager).Enable
	_ func(*fallback.Manager, fallback.Settings) error         = (*fallback.Manager).Reconfigure
	_ error                                                    = fallback.ErrChainChanged
	_ error                                                    = &fallback.ChainChangedError{Field: "", Running: "", Given: ""}
	_                                                          = fallback.Snapshot{HoldUntil: time.Time{}, HoldReason: ""}
	_                                                          = fallback.Entry{DisabledUntil: time.Time{}, DisabledReason: ""}
	_                                                          = fallback.ExhaustedError{Held: true}

	// Revision 5 additions (SEMANTICS §9.1, §9.2).
	_                = fallback.Settings{RecoveryBackoff: 0.0, MaxRecoveryTimeout: time.Duration(0)}
	_                = fallback.Snapshot{Trips: 0}
	_ fallback.Cause = fallback.CauseBackoff
)
