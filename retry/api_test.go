package retry_test

import (
	"context"
	"net/http"
	"time"

	"github.com/loopctl/loopctl-go/retry"
)

// The exported API exactly as docs/API.md states it: this file stops compiling
// if a signature drifts.
var (
	_ retry.Jitter = retry.FullJitter
	_ retry.Jitter = retry.ProportionalJitter
	_              = retry.Policy{
		MaxRetries:        0,
		BaseDelay:         time.Duration(0),
		MaxDelay:          time.Duration(0),
		Jitter:            retry.FullJitter,
		JitterFactor:      float64(0),
		RateLimitRetries:  0,
		RateLimitDelay:    time.Duration(0),
		MaxRateLimitDelay: time.Duration(0),
		Rand:              func() float64 { return 0 },
		OnRetry:           func(retry.Attempt) {},
		Failover:          false,            // rev 3
		RateLimitWait:     time.Duration(0), // rev 3
	}
	_ = retry.Attempt{Number: 1, Err: error(nil), Delay: time.Duration(0)}

	_ func(retry.Policy, int, float64) time.Duration                                             = retry.Policy.Delay
	_ func(retry.Policy) error                                                                   = retry.Policy.Validate
	_ func(context.Context, retry.Policy, func(context.Context) (string, error)) (string, error) = retry.Do[string]

	_ retry.Class              = retry.Transient
	_ retry.Class              = retry.RateLimited
	_ retry.Class              = retry.Permanent
	_ func(error) retry.Class  = retry.Classify
	_ func(retry.Class) string = retry.Class.String

	_                                 = retry.StatusError{Code: 0, RetryAfter: time.Duration(0), Err: error(nil)}
	_ func(*retry.StatusError) string = (*retry.StatusError).Error
	_                                 = retry.StatusError{Message: "", ErrorCode: "", Type: ""} // rev 2: the provider's own words
	_ func(*retry.StatusError) error  = (*retry.StatusError).Unwrap
	_ func(error) error               = retry.Unrecoverable

	_ error = retry.ErrRateLimitEscalation
	_       = retry.EscalationError{Attempts: 0, RetryAfter: time.Duration(0), Err: error(nil)}
	_ error = (*retry.EscalationError)(nil)

	_ func(string, time.Time) (time.Duration, bool) = retry.ParseRetryAfter
	_ func(http.Header, time.Time) time.Duration    = retry.RetryAfterFromHeader

	// rev 3: kinds and hints.
	_ retry.Limit                                   = retry.NoLimit
	_ retry.Limit                                   = retry.Throttle
	_ retry.Limit                                   = retry.Quota
	_ retry.Limit                                   = retry.Overload
	_ func(retry.Limit) string                      = retry.Limit.String
	_ func(retry.Limit) ([]byte, error)             = retry.Limit.MarshalText
	_ func(*retry.Limit, []byte) error              = (*retry.Limit).UnmarshalText
	_ func(int, string, string, string) retry.Limit = retry.LimitFor
	_ func(http.Header, time.Time) time.Time        = retry.HintFromHeader
	_ func(error) (retry.Limit, time.Time)          = retry.LimitOf
	_ func(error) bool                              = retry.IsTimeout
	_                                               = retry.StatusError{Limit: retry.NoLimit, Hint: time.Time{}}
	_                                               = retry.EscalationError{Limit: retry.NoLimit, Hint: time.Time{}}

	// rev 4: the retry budget (SEMANTICS §8.3).
	_ = retry.Policy{Budget: func() bool { return true }}
)
