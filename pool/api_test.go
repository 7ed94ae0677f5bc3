package pool_test

import (
	"context"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// The exported API as docs/API.md states it: this file stops compiling if a
// signature drifts.
var (
	_ = pool.Settings{
		Name:           "",
		Members:        []pool.Member{{Name: "", Weight: 1, Breaker: (*breaker.Breaker)(nil), SlowCallAfter: time.Duration(0)}},
		Affinity:       pool.AffinitySession,
		AffinitySlack:  0.0,
		Penalty:        time.Duration(0),
		AttemptTimeout: time.Duration(0),
		Rand:           func() uint64 { return 0 },
		Figures:        (*pool.Figures)(nil),
		Now:            func() time.Time { return time.Time{} },
	}
	_ pool.Affinity                                = pool.AffinityNone
	_ func(pool.Settings) error                    = pool.Settings.Validate
	_ func(pool.Settings) (*pool.Pool, error)      = pool.New
	_                                              = []any{pool.DefaultAffinitySlack, pool.DefaultPenalty, pool.DefaultAttemptTimeout, pool.MaxMembers}
	_ func(*pool.Pool) string                      = (*pool.Pool).Name
	_ func(*pool.Pool) int                         = (*pool.Pool).Len
	_ func(*pool.Pool, int) pool.Member            = (*pool.Pool).Member
	_ func(*pool.Pool, pool.Session) int           = (*pool.Pool).Home
	_ func(*pool.Pool, time.Time, int) pool.Status = (*pool.Pool).Status

	_ func(*pool.Pool, time.Time, *pool.Request, pool.Need) (pool.Attempt, error)  = (*pool.Pool).Choose
	_ func(*pool.Pool, time.Time, *pool.Request, pool.Need) (pool.Attempt, error)  = (*pool.Pool).Hedge
	_ func(*pool.Pool, time.Time, *pool.Request, pool.Need) bool                   = (*pool.Pool).Admits
	_ func(*pool.Pool, time.Time, *pool.Request, pool.Need) *pool.UnavailableError = (*pool.Pool).Unavailable
	_ func(*pool.Pool, time.Time, *pool.Request) pool.Result                       = (*pool.Pool).End

	_ = pool.Need{Session: pool.Session{}, Stream: false, Tokens: 0, InputTokens: 0, CanServe: func(int) bool { return true }}
	_ = pool.Headroom{Requests: pool.Limit{Remaining: 0, Reset: time.Time{}}, Tokens: pool.Limit{}, InputTokens: pool.Limit{}, OutputTokens: pool.Limit{}}
	_ = pool.Result{Outcome: pool.Served, Tried: 0, Kind: pool.Transient, Timeout: false, Elapsed: 0, Hint: time.Time{}}
	_ = []pool.Outcome{pool.Skipped, pool.Served, pool.Unsettled, pool.Failed}
	_ = []pool.Kind{pool.Transient, pool.RateLimit, pool.Quota}
	_ = pool.Status{Name: "", Weight: 0, Breaker: breaker.Snapshot{}, InFlight: 0, Stream: 0, Whole: 0, Headroom: pool.Headroom{}, LastMinute: 0, Share: 0.0}

	_ func(string) uint64                   = pool.Hash
	_ func(string) pool.Session             = pool.SessionOf
	_ func(uint64) pool.Session             = pool.SessionHash
	_ func(pool.Session) (uint64, bool)     = pool.Session.Hash
	_ func(uint64, uint64, float64) float64 = pool.Score

	_ func(pool.Attempt) int                       = pool.Attempt.Member
	_ func(pool.Attempt) string                    = pool.Attempt.Name
	_ func(pool.Attempt) bool                      = pool.Attempt.IsProbe
	_ func(pool.Attempt) time.Time                 = pool.Attempt.Deadline
	_ func(pool.Attempt, time.Time)                = pool.Attempt.FirstContent
	_ func(pool.Attempt, time.Time, pool.Headroom) = pool.Attempt.Headroom
	_ func(pool.Attempt, time.Time)                = pool.Attempt.Success
	_ func(pool.Attempt, time.Time)                = pool.Attempt.Failure
	_ func(pool.Attempt, time.Time, time.Duration) = pool.Attempt.TimeoutAfter
	_ func(pool.Attempt, time.Time, time.Time)     = pool.Attempt.RateLimited
	_ func(pool.Attempt, time.Time, time.Time)     = pool.Attempt.QuotaExhausted
	_ func(pool.Attempt, time.Time)                = pool.Attempt.Cancel
	_ func(pool.Attempt, time.Time)                = pool.Attempt.NoVerdict
	_ func(pool.Attempt, time.Time, time.Duration) = pool.Attempt.Lose

	_ error                        = pool.ErrInvalidSettings
	_ error                        = pool.ErrUnavailable
	_ error                        = &pool.SettingsError{Field: "", Value: "", Rule: ""}
	_ error                        = &pool.UnavailableError{Pool: "", RetryAt: time.Time{}, Limited: false}
	_ func(error, time.Time) error = pool.RateLimitedError
	_ func(error, time.Time) error = pool.QuotaError
	_ func(error) error            = pool.NoVerdictError
	_ interface{ Unwrap() error }  = &pool.VerdictError{}

	_ func(context.Context, *pool.Pool, *pool.Request, pool.Need, func(context.Context, pool.Attempt) (int, error)) (int, pool.Result, error) = pool.Do[int]
)
