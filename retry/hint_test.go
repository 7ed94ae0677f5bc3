package retry

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// hdr builds a header from key, value pairs, keeping the keys as written.
func hdr(kv ...string) http.Header {
	out := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i]] = append(out[kv[i]], kv[i+1])
	}
	return out
}

func TestHintFromHeader(t *testing.T) {
	rfc := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	at := func(d time.Duration) time.Time { return now.Add(d) }
	var none time.Time
	tests := []struct {
		name string
		h    http.Header
		want time.Time
	}{
		{"nil", nil, none},
		{"empty", hdr(), none},
		{"seconds", hdr("Retry-After", "7"), at(7 * time.Second)},
		{"zero seconds is now", hdr("Retry-After", "0"), now},
		{"date", hdr("Retry-After", now.Add(time.Minute).Format(http.TimeFormat)), at(time.Minute)},
		{"past date is now", hdr("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"), now},
		{"garbage", hdr("Retry-After", "soon"), none},
		{"ms", hdr("Retry-After-Ms", "1500"), at(1500 * time.Millisecond)},
		{"ms lower-case", hdr("retry-after-ms", "20.5"), at(20500 * time.Microsecond)},
		{"latest of both: seconds", hdr("Retry-After", "3", "Retry-After-Ms", "250"), at(3 * time.Second)},
		{"latest of both: ms", hdr("Retry-After", "3", "Retry-After-Ms", "3250"), at(3250 * time.Millisecond)},
		{"invalid ms, valid seconds", hdr("Retry-After", "3", "Retry-After-Ms", "-1"), at(3 * time.Second)},

		// OpenAI: the reset of the limit whose remaining is 0.
		{"openai requests exhausted", hdr("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "1s",
			"X-Ratelimit-Remaining-Tokens", "5000", "X-Ratelimit-Reset-Tokens", "6m0s"), at(time.Second)},
		{"openai tokens exhausted", hdr("X-Ratelimit-Remaining-Requests", "9", "X-Ratelimit-Reset-Requests", "1s",
			"X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "6m0s"), at(6 * time.Minute)},
		{"openai both exhausted: latest", hdr("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "1m30.5s",
			"X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "20ms"), at(90500 * time.Millisecond)},
		{"openai fractional seconds", hdr("x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "0.5s"), at(500 * time.Millisecond)},
		{"openai none exhausted", hdr("X-Ratelimit-Remaining-Requests", "3", "X-Ratelimit-Reset-Requests", "1s"), none},
		{"openai no remaining header", hdr("X-Ratelimit-Reset-Requests", "1s"), none},
		{"openai remaining not a number", hdr("X-Ratelimit-Remaining-Requests", "zero", "X-Ratelimit-Reset-Requests", "1s"), none},
		{"openai bad reset", hdr("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "1 second"), none},
		{"openai negative reset", hdr("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "-1s"), none},
		{"Retry-After wins over resets", hdr("Retry-After", "2", "X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "6m0s"), at(2 * time.Second)},
		{"an invalid Retry-After does not hide resets", hdr("Retry-After", "later", "X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "6m0s"), at(6 * time.Minute)},

		// Anthropic: RFC 3339 resets.
		{"anthropic tokens exhausted", hdr("Anthropic-Ratelimit-Requests-Remaining", "40", "Anthropic-Ratelimit-Requests-Reset", rfc(time.Second),
			"Anthropic-Ratelimit-Tokens-Remaining", "0", "Anthropic-Ratelimit-Tokens-Reset", rfc(30*time.Second)), at(30 * time.Second)},
		{"anthropic input and output exhausted: latest", hdr(
			"Anthropic-Ratelimit-Input-Tokens-Remaining", "0", "Anthropic-Ratelimit-Input-Tokens-Reset", rfc(10*time.Second),
			"Anthropic-Ratelimit-Output-Tokens-Remaining", "0", "Anthropic-Ratelimit-Output-Tokens-Reset", rfc(20*time.Second)), at(20 * time.Second)},
		{"anthropic no remaining: earliest", hdr("Anthropic-Ratelimit-Requests-Reset", rfc(40*time.Second),
			"anthropic-ratelimit-output-tokens-reset", rfc(15*time.Second)), at(15 * time.Second)},
		{"anthropic none exhausted", hdr("Anthropic-Ratelimit-Requests-Remaining", "3", "Anthropic-Ratelimit-Requests-Reset", rfc(time.Second)), none},
		{"anthropic past reset is now", hdr("Anthropic-Ratelimit-Requests-Remaining", "0", "Anthropic-Ratelimit-Requests-Reset", rfc(-time.Hour)), now},
		{"anthropic bad reset", hdr("Anthropic-Ratelimit-Requests-Remaining", "0", "Anthropic-Ratelimit-Requests-Reset", "tomorrow"), none},
		{"anthropic fractional RFC 3339", hdr("Anthropic-Ratelimit-Tokens-Remaining", "0", "Anthropic-Ratelimit-Tokens-Reset", rfc(1500*time.Millisecond)), at(1500 * time.Millisecond)},
		{"anthropic Retry-After wins", hdr("Retry-After", "5", "Anthropic-Ratelimit-Tokens-Remaining", "0", "Anthropic-Ratelimit-Tokens-Reset", rfc(time.Minute)), at(5 * time.Second)},
		{"both providers: latest", hdr("X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "2s",
			"Anthropic-Ratelimit-Tokens-Remaining", "0", "Anthropic-Ratelimit-Tokens-Reset", rfc(3*time.Second)), at(3 * time.Second)},
	}
	for _, tt := range tests {
		if got := HintFromHeader(tt.h, now); !got.Equal(tt.want) {
			t.Errorf("%s: HintFromHeader = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestHintUncapped(t *testing.T) {
	h := hdr("Retry-After", "86400")
	if got := HintFromHeader(h, now); !got.Equal(now.Add(24 * time.Hour)) {
		t.Errorf("hint %v, want a day later: uncapped", got)
	}
}

func TestParseResetDuration(t *testing.T) {
	tests := []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"1s", time.Second, true},
		{"6m0s", 6 * time.Minute, true},
		{"20ms", 20 * time.Millisecond, true},
		{"1m30.5s", 90500 * time.Millisecond, true},
		{"0.5s", 500 * time.Millisecond, true},
		{" 2h ", 2 * time.Hour, true},
		{"0", 0, true},
		{"0s", 0, true},
		{"", 0, false},
		{"-1s", 0, false},
		{"+1s", 0, false},
		{"1", 0, false},
		{"1d", 0, false},
		{"s", 0, false},
		{"99999999999h", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseResetDuration(tt.v)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseResetDuration(%q) = (%v, %v), want (%v, %v)", tt.v, got, ok, tt.want, tt.ok)
		}
	}
}

// FuzzHintFromHeader feeds any value to every header the hint reads: the
// hint is zero or never before now, and RetryAfterFromHeader agrees with it.
func FuzzHintFromHeader(f *testing.F) {
	for _, s := range []string{"7", "0", "1500", "1m30.5s", "6m0s", "-1s", "2026-11-29T19:00:30Z",
		"Wed, 21 Oct 2015 07:28:00 GMT", "99999999999999999999", "", "garbage"} {
		f.Add(s, s, "0", int64(1764442800))
	}
	keys := []string{"Retry-After", "Retry-After-Ms", "X-Ratelimit-Reset-Requests", "X-Ratelimit-Reset-Tokens",
		"Anthropic-Ratelimit-Requests-Reset", "Anthropic-Ratelimit-Tokens-Reset",
		"Anthropic-Ratelimit-Input-Tokens-Reset", "Anthropic-Ratelimit-Output-Tokens-Reset"}
	f.Fuzz(func(t *testing.T, v, w, remaining string, unix int64) {
		now := time.Unix(unix%(1<<40), 0)
		for i, k := range keys {
			h := http.Header{k: {v}, "X-Ratelimit-Remaining-Requests": {remaining}, "X-Ratelimit-Remaining-Tokens": {remaining},
				"Anthropic-Ratelimit-Tokens-Remaining": {remaining}}
			if i > 0 {
				h[keys[i-1]] = []string{w}
			}
			hint := HintFromHeader(h, now)
			if !hint.IsZero() && hint.Before(now) {
				t.Fatalf("%v: hint %v before now %v", h, hint, now)
			}
			d := RetryAfterFromHeader(h, now)
			if d < 0 || (hint.IsZero() && d != 0) || (!hint.IsZero() && d != max(hint.Sub(now), 0)) {
				t.Fatalf("%v: RetryAfterFromHeader = %v, hint %v", h, d, hint)
			}
		}
	})
}

// FuzzParseResetDuration: never negative, (0, false) on failure, and the
// same as time.ParseDuration whenever it succeeds.
func FuzzParseResetDuration(f *testing.F) {
	for _, s := range []string{"1s", "6m0s", "20ms", "1m30.5s", "0.5s", "0", "-1s", "+1s", "", "1e3s", "µs", "1.s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseResetDuration(v)
		if d < 0 || (!ok && d != 0) {
			t.Fatalf("parseResetDuration(%q) = (%v, %v)", v, d, ok)
		}
		if ok {
			if want, err := time.ParseDuration(strings.TrimSpace(v)); err != nil || want != d {
				t.Fatalf("parseResetDuration(%q) = %v, time.ParseDuration says %v, %v", v, d, want, err)
			}
		}
	})
}
