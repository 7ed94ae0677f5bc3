// Package durtext is the one rounding rule for durations that people read
// in loopctl's texts (refusals, errors, logs): [RoundUp]. breaker.RoundRetry
// is this rule; the packages that do not import breaker (fallback, retry)
// use it directly.
package durtext

import (
	"math"
	"time"
)

// RoundUp rounds d up to the precision texts state it in: whole
// milliseconds below 1s (10ms, 250ms), tenths of a second below 10s (1.3s,
// 9.5s), whole seconds from 10s (12s, 1m30s). Rounding up never tells a
// reader to retry too early, and a positive wait never reads "0s". A
// duration of 0 or less gives 0.
func RoundUp(d time.Duration) time.Duration {
	var step time.Duration
	switch {
	case d <= 0:
		return 0
	case d < time.Second:
		step = time.Millisecond
	case d < 10*time.Second:
		step = 100 * time.Millisecond
	default:
		step = time.Second
	}
	if r := d % step; r != 0 {
		if d > math.MaxInt64-step {
			return d
		}
		d += step - r
	}
	return d
}

// Wait renders a wait for a text: "in 1.3s", or "now" when it is not
// positive (never "in 0s").
func Wait(d time.Duration) string {
	if d <= 0 {
		return "now"
	}
	return "in " + RoundUp(d).String()
}
