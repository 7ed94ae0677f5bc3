package pool

import (
	"errors"
	"strconv"
	"time"
)

// ErrInvalidSettings is matched (errors.Is) by every [*SettingsError].
var ErrInvalidSettings = errors.New("pool: invalid settings")

// ErrUnavailable is matched (errors.Is) by every [*UnavailableError].
var ErrUnavailable = errors.New("pool: no member admitted")

// SettingsError reports a bad [Settings] value. It matches
// [ErrInvalidSettings] with errors.Is.
type SettingsError struct {
	// Field names the offending field, as "Members[2].Weight".
	Field string
	// Value is the offending value, formatted.
	Value string
	// Rule is what the field must be, as a phrase ("must be above 0").
	Rule string
}

// Error returns text such as
// "pool: Members[1].Weight must be a finite number above 0 (got NaN)".
func (e *SettingsError) Error() string {
	return "pool: " + e.Field + " " + e.Rule + " (got " + e.Value + ")"
}

// Is reports whether target is [ErrInvalidSettings].
func (e *SettingsError) Is(target error) bool { return target == ErrInvalidSettings }

// UnavailableError is what [Pool.Choose] returns when no member is admitted
// for the request: the pool is unavailable for this attempt. It matches
// [ErrUnavailable] with errors.Is.
type UnavailableError struct {
	// Pool is the pool's name (Settings.Name).
	Pool string
	// RetryAt is the earliest time at which a member not yet tried by the
	// request may be admitted again (a cooldown's end, a provider's hint, a
	// headroom reset); zero when no such time is known (every member was
	// tried, or cannot serve the request).
	RetryAt time.Time
	// Limited reports that every member that is out is out for the
	// provider's say: a rate-limit hint, a quota, or its headroom. A gateway
	// answers 429 then, else 503.
	Limited bool
}

// Error returns text such as `pool "sonnet": no member admitted`, with
// " (rate limited)" when Limited.
func (e *UnavailableError) Error() string {
	s := "pool " + strconv.Quote(e.Pool) + ": no member admitted"
	if e.Limited {
		s += " (rate limited)"
	}
	return s
}

// Is reports whether target is [ErrUnavailable].
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }
