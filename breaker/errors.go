package breaker

import (
	"errors"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/internal/durtext"
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
//	tool temporarily unavailable: circuit breaker open for "search"; retry in 12s
//	tool temporarily unavailable: circuit breaker open for "search" (a probe is in flight); retry in 250ms
//
// It always starts with "tool temporarily unavailable: circuit breaker open".
// The wait is RetryIn rounded up by [RoundRetry]: below 10s it keeps
// sub-second precision (250ms, 9.5s), enough for the reader to act on.
func (e *OpenError) Error() string {
	s := "tool temporarily unavailable: circuit breaker open"
	if e.Name != "" {
		s += " for " + strconv.Quote(e.Name)
	}
	if e.State == HalfOpen {
		s += " (a probe is in flight)"
	}
	return s + "; retry in " + RoundRetry(e.RetryIn).String()
}

// RoundRetry rounds a wait up to the precision refusal texts state it in:
// whole milliseconds below 1s (10ms, 250ms), tenths of a second below 10s
// (1.3s, 9.5s), whole seconds from 10s (12s, 1m30s). Rounding up never tells
// a reader to retry too early. A wait of 0 or less gives 0.
func RoundRetry(d time.Duration) time.Duration { return durtext.RoundUp(d) }

// Is reports whether target is [ErrOpen].
func (e *OpenError) Is(target error) bool { return target == ErrOpen }

// SettingsError reports a bad [Settings] value. It matches [ErrInvalidSettings]
// with errors.Is.
type SettingsError struct {
	// Field is the name of the offending Settings field.
	Field string
	// Value is the offending value, formatted.
	Value string
	// Rule is what the field must be, as a phrase ("must be within [0, 1]");
	// empty means "must not be negative".
	Rule string
}

// Error returns text such as
// "breaker: FailureThreshold must not be negative (got -1)".
func (e *SettingsError) Error() string {
	rule := e.Rule
	if rule == "" {
		rule = "must not be negative"
	}
	return "breaker: " + e.Field + " " + rule + " (got " + e.Value + ")"
}

// Is reports whether target is [ErrInvalidSettings].
func (e *SettingsError) Is(target error) bool { return target == ErrInvalidSettings }
