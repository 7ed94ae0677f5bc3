package retry

import (
	"net/http"
	"strings"
	"time"
)

// resetHeader names one provider rate limit: the header saying how much of it
// is left and the header saying when it resets, each in canonical and
// lower-case form (for headers built by hand).
type resetHeader struct {
	remaining, remainingLower string
	reset, resetLower         string
}

// openAIResets are OpenAI's limits; their resets are durations ("6m0s").
var openAIResets = [...]resetHeader{
	{"X-Ratelimit-Remaining-Requests", "x-ratelimit-remaining-requests", "X-Ratelimit-Reset-Requests", "x-ratelimit-reset-requests"},
	{"X-Ratelimit-Remaining-Tokens", "x-ratelimit-remaining-tokens", "X-Ratelimit-Reset-Tokens", "x-ratelimit-reset-tokens"},
}

// anthropicResets are Anthropic's limits; their resets are RFC 3339 times.
var anthropicResets = [...]resetHeader{
	{"Anthropic-Ratelimit-Requests-Remaining", "anthropic-ratelimit-requests-remaining", "Anthropic-Ratelimit-Requests-Reset", "anthropic-ratelimit-requests-reset"},
	{"Anthropic-Ratelimit-Tokens-Remaining", "anthropic-ratelimit-tokens-remaining", "Anthropic-Ratelimit-Tokens-Reset", "anthropic-ratelimit-tokens-reset"},
	{"Anthropic-Ratelimit-Input-Tokens-Remaining", "anthropic-ratelimit-input-tokens-remaining", "Anthropic-Ratelimit-Input-Tokens-Reset", "anthropic-ratelimit-input-tokens-reset"},
	{"Anthropic-Ratelimit-Output-Tokens-Remaining", "anthropic-ratelimit-output-tokens-remaining", "Anthropic-Ratelimit-Output-Tokens-Reset", "anthropic-ratelimit-output-tokens-reset"},
}

// HintFromHeader returns the hint of a response with headers h received at
// now (SEMANTICS §4): the time at which the provider said it may be
// called again, or the zero Time when the headers give none. It is the
// latest of
//
//   - Retry-After (seconds or an HTTP-date, see [ParseRetryAfter]) and
//   - retry-after-ms (milliseconds, possibly fractional),
//
// and only when neither of them is present with a valid value, the latest
// reset of the exhausted limits:
//
//   - OpenAI's x-ratelimit-reset-requests and x-ratelimit-reset-tokens
//     (durations such as "1s", "6m0s", "20ms", "1m30.5s", read by
//     as Go durations) of each limit whose x-ratelimit-remaining-* is 0;
//   - Anthropic's anthropic-ratelimit-{requests,tokens,input-tokens,
//     output-tokens}-reset (RFC 3339 times) of each limit whose -remaining
//     is 0; when none of the limits with a reset has a -remaining header,
//     the earliest of those resets.
//
// A limit whose remaining is not 0 (or not a number) gives no hint; an
// OpenAI reset without its remaining header gives none either. Invalid
// values count as absent. The hint is never before now (a past date gives
// now) and is not capped. Only the first value of each header is read.
func HintFromHeader(h http.Header, now time.Time) time.Time {
	var hint time.Time
	if v, ok := header(h, "Retry-After", "retry-after"); ok {
		if d, ok := ParseRetryAfter(v, now); ok {
			hint = latest(hint, now.Add(d))
		}
	}
	if v, ok := header(h, "Retry-After-Ms", "retry-after-ms"); ok {
		if d, ok := parseMillis(v); ok {
			hint = latest(hint, now.Add(d))
		}
	}
	if !hint.IsZero() {
		return hint
	}
	return latest(openAIReset(h, now), anthropicReset(h, now))
}

// openAIReset returns the latest reset of OpenAI's exhausted limits, or zero.
func openAIReset(h http.Header, now time.Time) time.Time {
	var hint time.Time
	for _, r := range openAIResets {
		rem, ok := header(h, r.remaining, r.remainingLower)
		if !ok || !isZeroCount(rem) {
			continue
		}
		if v, ok := header(h, r.reset, r.resetLower); ok {
			if d, ok := parseResetDuration(v); ok {
				hint = latest(hint, now.Add(d))
			}
		}
	}
	return hint
}

// anthropicReset returns the latest reset of Anthropic's exhausted limits,
// or, when no limit with a reset says what remains, the earliest reset; zero
// if none.
func anthropicReset(h http.Header, now time.Time) time.Time {
	var exhausted, earliest time.Time
	sawRemaining := false
	for _, r := range anthropicResets {
		v, ok := header(h, r.reset, r.resetLower)
		if !ok {
			continue
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
		if err != nil {
			continue
		}
		t = latest(t, now)
		if earliest.IsZero() || t.Before(earliest) {
			earliest = t
		}
		if rem, ok := header(h, r.remaining, r.remainingLower); ok {
			sawRemaining = true
			if isZeroCount(rem) {
				exhausted = latest(exhausted, t)
			}
		}
	}
	if sawRemaining {
		return exhausted
	}
	return earliest
}

// parseResetDuration parses a rate-limit reset duration as OpenAI sends it in
// x-ratelimit-reset-*: a sequence of decimal numbers, each with an optional
// fraction and a unit ("ns", "us", "µs", "ms", "s", "m", "h"), such as "1s",
// "6m0s", "20ms", "1m30.5s" or "0.5s" (Go's duration syntax), or "0".
// Surrounding spaces are trimmed; a sign, an empty value, an unknown unit or
// a value too large for a Duration gives (0, false).
func parseResetDuration(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" || v[0] == '-' || v[0] == '+' {
		return 0, false
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

// isZeroCount reports whether v (trimmed) is a decimal 0 ("0", "00").
func isZeroCount(v string) bool {
	v = strings.TrimSpace(v)
	if v == "" {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] != '0' {
			return false
		}
	}
	return true
}

// latest returns the later of a and b, treating the zero Time as absent.
func latest(a, b time.Time) time.Time {
	if a.IsZero() || b.After(a) {
		return b
	}
	return a
}
