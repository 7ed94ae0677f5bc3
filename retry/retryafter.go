package retry

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxSeconds is the largest whole number of seconds a Duration holds.
const maxSeconds = math.MaxInt64 / int64(time.Second)

// ParseRetryAfter parses the value of a Retry-After header (RFC 9110,
// section 10.2.3) received at now. Surrounding spaces are trimmed. It
// accepts a non-negative integer number of seconds (a number too large for
// a Duration saturates at the largest Duration) or an HTTP-date in any
// format http.ParseTime accepts; a date at or before now gives (0, true).
// Anything else (empty, negative, fractional, garbage) gives (0, false).
// The result is never negative.
func ParseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > maxSeconds { // only ErrRange is possible here
			return math.MaxInt64, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d := t.Sub(now) // saturates
	if d < 0 {
		d = 0
	}
	return d, true
}

// RetryAfterFromHeader returns the retry hint in response headers h
// received at now as a wait, for [StatusError.RetryAfter]: the time from now
// until [HintFromHeader]'s hint, 0 when there is none (or it is not after
// now; 0 also means "no hint" to [Do]). It saturates at the largest
// Duration.
func RetryAfterFromHeader(h http.Header, now time.Time) time.Duration {
	hint := HintFromHeader(h, now)
	if hint.IsZero() {
		return 0
	}
	return max(hint.Sub(now), 0)
}

// header returns the first value of the canonical key, or of the
// lower-case key for headers built by hand.
func header(h http.Header, canonical, lower string) (string, bool) {
	if vs := h[canonical]; len(vs) > 0 {
		return vs[0], true
	}
	if vs := h[lower]; len(vs) > 0 {
		return vs[0], true
	}
	return "", false
}

// parseMillis parses a non-negative decimal number of milliseconds
// (digits with at most one '.'), saturating at the largest Duration.
func parseMillis(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	digits, dots := 0, 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return 0, false // signs, exponents, "inf", "nan", hex
		}
	}
	if digits == 0 || dots > 1 {
		return 0, false
	}
	ms, err := strconv.ParseFloat(v, 64)
	if err != nil && !math.IsInf(ms, 1) { // out of range gives +Inf
		return 0, false
	}
	ns := ms * float64(time.Millisecond)
	if ns >= math.MaxInt64 {
		return math.MaxInt64, true
	}
	return time.Duration(ns), true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
