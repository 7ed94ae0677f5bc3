package retry

import (
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
	date := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	tests := []struct {
		v      string
		want   time.Duration
		wantOK bool
	}{
		{"120", 120 * time.Second, true},
		{"0", 0, true},
		{"1", time.Second, true},
		{"007", 7 * time.Second, true},
		{"  7 ", 7 * time.Second, true},
		{"\t3\r\n", 3 * time.Second, true},
		{"9223372036", 9223372036 * time.Second, true}, // largest whole number of seconds
		{"9223372037", maxDur, true},                   // saturates
		{"99999999999999999999999999999", maxDur, true},
		{"", 0, false},
		{"   ", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"1e3", 0, false},
		{"5s", 0, false},
		{"5 5", 0, false},
		{"0x10", 0, false},
		{"soon", 0, false},
		{date(90 * time.Second), 90 * time.Second, true},
		{" " + date(time.Hour) + " ", time.Hour, true},
		{date(0), 0, true},
		{date(-time.Hour), 0, true},
		{"Wed, 21 Oct 2015 07:28:00 GMT", 0, true},  // IMF-fixdate in the past
		{"Sunday, 06-Nov-94 08:49:37 GMT", 0, true}, // RFC 850
		{"Sun Nov  6 08:49:37 1994", 0, true},       // ANSI C asctime
		{now.Add(30 * time.Second).Format(time.ANSIC), 30 * time.Second, true},
		{"Sun, 99 Nov 2026 08:49:37 GMT", 0, false},
		{"Sun, 06 Nov 1994", 0, false},
		{"2026-11-29T19:00:30Z", 0, false}, // RFC 3339 is not an HTTP-date
	}
	for _, tt := range tests {
		got, ok := ParseRetryAfter(tt.v, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRetryAfter(%q) = (%v, %v), want (%v, %v)", tt.v, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestParseRetryAfterFarFuture(t *testing.T) {
	// A date far in the future saturates instead of overflowing.
	got, ok := ParseRetryAfter("Fri, 31 Dec 9999 23:59:59 GMT", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC))
	if !ok || got != math.MaxInt64 {
		t.Errorf("got (%v, %v), want (max, true)", got, ok)
	}
}

func TestRetryAfterFromHeader(t *testing.T) {
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i < len(kv); i += 2 {
			out[kv[i]] = append(out[kv[i]], kv[i+1])
		}
		return out
	}
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", h(), 0},
		{"nil header", nil, 0},
		{"seconds", h("Retry-After", "3"), 3 * time.Second},
		{"date", h("Retry-After", now.Add(time.Minute).Format(http.TimeFormat)), time.Minute},
		{"past date", h("Retry-After", "Wed, 21 Oct 2015 07:28:00 GMT"), 0},
		{"garbage", h("Retry-After", "later"), 0},
		{"ms", h("Retry-After-Ms", "1500"), 1500 * time.Millisecond},
		{"ms fractional", h("Retry-After-Ms", "1234.5"), 1234500 * time.Microsecond},
		{"ms leading dot", h("Retry-After-Ms", ".5"), 500 * time.Microsecond},
		{"ms spaces", h("Retry-After-Ms", " 20 "), 20 * time.Millisecond},
		{"the later wins: seconds", h("Retry-After-Ms", "250", "Retry-After", "3"), 3 * time.Second},
		{"the later wins: ms", h("Retry-After-Ms", "3500", "Retry-After", "3"), 3500 * time.Millisecond},
		{"ms zero, seconds later", h("Retry-After-Ms", "0", "Retry-After", "3"), 3 * time.Second},
		{"both zero", h("Retry-After-Ms", "0", "Retry-After", "0"), 0},
		{"reset of the exhausted limit", h("X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "6m0s"), 6 * time.Minute},
		{"Retry-After hides resets", h("Retry-After", "2", "X-Ratelimit-Remaining-Tokens", "0", "X-Ratelimit-Reset-Tokens", "6m0s"), 2 * time.Second},
		{"ms lower-case key", h("retry-after-ms", "40"), 40 * time.Millisecond},
		{"lower-case key", h("retry-after", "4"), 4 * time.Second},
		{"ms invalid falls back", h("Retry-After-Ms", "-1", "Retry-After", "3"), 3 * time.Second},
		{"ms exponent rejected", h("Retry-After-Ms", "1e3", "Retry-After", "2"), 2 * time.Second},
		{"ms nan rejected", h("Retry-After-Ms", "NaN"), 0},
		{"ms inf rejected", h("Retry-After-Ms", "Inf"), 0},
		{"ms two dots", h("Retry-After-Ms", "1.2.3"), 0},
		{"ms dot only", h("Retry-After-Ms", "."), 0},
		{"ms empty falls back", h("Retry-After-Ms", "", "Retry-After", "1"), time.Second},
		{"ms huge saturates", h("Retry-After-Ms", "99999999999999999"), math.MaxInt64},
		{"ms out of float range saturates", h("Retry-After-Ms", strings.Repeat("9", 400)), math.MaxInt64},
	}
	for _, tt := range tests {
		if got := RetryAfterFromHeader(tt.h, now); got != tt.want {
			t.Errorf("%s: RetryAfterFromHeader = %v, want %v", tt.name, got, tt.want)
		}
	}
}
