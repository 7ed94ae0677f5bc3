package breaker_test

import (
	"context"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// The exported API exactly as docs/API.md states it: this file stops compiling
// if a signature drifts.
var (
	_ breaker.State                        = breaker.Closed
	_ breaker.State                        = breaker.Open
	_ breaker.State                        = breaker.HalfOpen
	_ func(breaker.State) string           = breaker.State.String
	_ error                                = breaker.ErrOpen
	_                                      = breaker.OpenError{Name: "", State: breaker.Open, RetryIn: time.Duration(0)}
	_ func(*breaker.OpenError) string      = (*breaker.OpenError).Error
	_ func(*breaker.OpenError, error) bool = (*breaker.OpenError).Is
	_                                      = breaker.Settings{
		Name:             "",
		FailureThreshold: 0,
		RecoveryDuration: time.Duration(0),
		ProbeTimeout:     time.Duration(0),
		Now:              func() time.Time { return time.Time{} },
		OnStateChange:    func(name string, from, to breaker.State) {},
	}
	_ func(breaker.Settings) (*breaker.Breaker, error) = breaker.New

	_ func(*breaker.Breaker) (breaker.Permit, error) = (*breaker.Breaker).Allow
	_ func(*breaker.Breaker) bool                    = (*breaker.Breaker).WouldAllow
	_ func(*breaker.Breaker) breaker.State           = (*breaker.Breaker).State
	_ func(*breaker.Breaker) breaker.Snapshot        = (*breaker.Breaker).Snapshot

	_ = breaker.Snapshot{
		State:               breaker.Closed,
		ConsecutiveFailures: 0,
		LastFailure:         time.Time{},
		ProbeStartedAt:      time.Time{},
	}
	_ = breaker.Snapshot{} == breaker.Snapshot{} // comparable with ==

	_ func(breaker.Permit) bool   = breaker.Permit.IsProbe
	_ func(breaker.Permit)        = breaker.Permit.Success
	_ func(breaker.Permit)        = breaker.Permit.Failure
	_ func(breaker.Permit)        = breaker.Permit.Cancel
	_ func(breaker.Permit, error) = breaker.Permit.Done

	// Revision 2 additions.
	_ func(breaker.Permit) (time.Time, bool) = breaker.Permit.Deadline
	_ func(*breaker.Breaker)                 = (*breaker.Breaker).Reset
	_ func(time.Duration) time.Duration      = breaker.RoundRetry

	// Revision 3 additions.
	_ func(breaker.Permit) = breaker.Permit.Timeout
	_ breaker.Outcome      = breaker.OutcomeTimeout
	_ breaker.Outcome      = breaker.OutcomeTrip // rev 4: a flag on the verdict
	_                      = breaker.SharedPermit{Gen: 0, Deadline: 0, Issued: 0, Probe: false}

	// Revision 4 additions.
	_ = breaker.Settings{
		FailureRate:   0.0,
		RateWindow:    time.Duration(0),
		RateMinCalls:  0,
		SlowCallAfter: time.Duration(0),
		SlowCallRate:  0.0,
	}
	_ func(breaker.Permit, time.Duration)        = breaker.Permit.SuccessAfter
	_ func(breaker.Permit, time.Duration)        = breaker.Permit.TimeoutAfter
	_ func(breaker.Permit, error, time.Duration) = breaker.Permit.DoneAfter
	_                                            = breaker.SettingsError{Field: "", Value: "", Rule: ""}

	_ func(context.Context, *breaker.Breaker, func(context.Context) (int, error)) (int, error) = breaker.Do[int]

	// One Done shape for every permit.
	_ breaker.Settler             = breaker.Permit{}
	_ func(breaker.Permit, error) = breaker.Settle[breaker.Permit]
)
