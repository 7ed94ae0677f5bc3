package breaker

import (
	"errors"
	"strconv"
	"time"
)

// ErrOpen is the sentinel every refusal matches: errors.Is(err, ErrOpen) is
// true for every error returned by a refused [Breaker.Allow] or [Do].
var ErrOpen = errors.New("tool temporarily unavailable: circuit breaker open")

// ErrInvalidSettings is matched (with errors.Is) by every [SettingsError].
var ErrInvalidSettings = errors.New("breaker: invalid settings")

// OpenError is what a refusal returns (as *OpenError). It is a soft error: its
// text is meant to be shown to the model, which can wait or use another tool.
//
// The *OpenError returned by [Breaker.Allow] may be shared between refusals
// that carry the same State and RetryIn (this is how refusals avoid
// allocating): treat it as read-only.
type OpenError struct {
	// Name is the breaker's (tool's) name, from Settings.Name.
	Name string
	// State is Open, or HalfOpen when a probe is in flight.
	State State
	// RetryIn is how long until a probe may be granted (for a probe in
	// flight: until its lease ends). It is rounded up to a whole millisecond,
	// so it never says "retry" too early; with a clock that moves in whole
	// milliseconds it is exact.
	RetryIn time.Duration
}

// Error returns text such as
//
//	tool temporarily unavailable: circuit breaker open for "search"; next probe in 12s
//
// It always starts with "tool temporarily unavailable: circuit breaker open".
func (e *OpenError) Error() string {
	s := "tool temporarily unavailable: circuit breaker open"
	if e.Name != "" {
		s += " for " + strconv.Quote(e.Name)
	}
	if e.State == HalfOpen {
		s += " (a probe is in flight)"
	}
	return s + "; next probe in " + e.RetryIn.String()
}

// Is reports whether target is [ErrOpen].
func (e *OpenError) Is(target error) bool { return target == ErrOpen }

// SettingsError reports a bad [Settings] value. It matches [ErrInvalidSettings]
// with errors.Is.
type SettingsError struct {
	// Field is the name of the offending Settings field.
	Field string
	// Value is the offending value, formatted.
	Value string
}

// Error returns text such as
// "breaker: FailureThreshold must not be negative (got -1)".
func (e *SettingsError) Error() string {
	return "breaker: " + e.Field + " must not be negative (got " + e.Value + ")"
}

// Is reports whether target is [ErrInvalidSettings].
func (e *SettingsError) Is(target error) bool { return target == ErrInvalidSettings }
