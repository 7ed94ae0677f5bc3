package breaker_test

import (
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// The API of repeated trips and member verdicts exactly as docs/API.md states
// it (SEMANTICS §9.1, §9.3.1): this file stops compiling if a signature
// drifts.
var (
	_ = breaker.Settings{
		RecoveryBackoff:    0.0,
		MaxRecoveryTimeout: time.Duration(0),
		QuotaCooldown:      time.Duration(0),
	}
	_ func(breaker.Permit, time.Time)                = breaker.Permit.RateLimited
	_ func(breaker.Permit, time.Time)                = breaker.Permit.QuotaExhausted
	_ func(*breaker.Breaker, breaker.Settings) error = (*breaker.Breaker).Reconfigure
	_                                                = breaker.Snapshot{Trips: 0, OpenUntil: time.Time{}, Cause: breaker.CauseRecoveryTimeout}
	_                                                = []breaker.Cause{breaker.CauseRecoveryTimeout, breaker.CauseBackoff,
		breaker.CauseHint, breaker.CauseQuota, breaker.CauseManual}
	_ func(breaker.Cause) string = breaker.Cause.String
	_ breaker.Outcome            = breaker.OutcomeRateLimited
	_ breaker.Outcome            = breaker.OutcomeQuota
	_ time.Duration              = breaker.DefaultQuotaCooldown
	_                            = breaker.DefaultMaxRecoveryFactor
)
