package gateway

import (
	"net/http"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

// hdr builds a header from name, value pairs, as a transport reads them
// (canonical names).
func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

// GATEWAY §11.3: the figures of every wire's rate-limit headers, and the
// ones ignored.
func TestHeadroomOf(t *testing.T) {
	now := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return now.Add(d) }
	lim := func(n int64, d time.Duration) pool.Limit { return pool.Limit{Remaining: n, Reset: at(d)} }
	for _, tc := range []struct {
		name string
		h    http.Header
		want pool.Headroom
	}{
		{"none", hdr("Content-Type", "application/json", "X-Request-Id", "req_1", "Retry-After", "3"), pool.Headroom{}},
		{"openai", hdr("x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "59", "x-ratelimit-reset-requests", "1s",
			"x-ratelimit-limit-tokens", "150000", "x-ratelimit-remaining-tokens", "149984", "x-ratelimit-reset-tokens", "6m0s"),
			pool.Headroom{Requests: lim(59, time.Second), Tokens: lim(149984, 6*time.Minute)}},
		{"openai: milliseconds and compound durations", hdr("x-ratelimit-remaining-requests", "3", "x-ratelimit-reset-requests", "20ms",
			"x-ratelimit-remaining-tokens", "10", "x-ratelimit-reset-tokens", "1h2m3.5s"),
			pool.Headroom{Requests: lim(3, 20*time.Millisecond), Tokens: lim(10, time.Hour+2*time.Minute+3500*time.Millisecond)}},
		{"none left is a figure", hdr("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "2s"),
			pool.Headroom{Requests: lim(0, 2*time.Second)}},
		{"anthropic", hdr("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "49", "anthropic-ratelimit-requests-reset", "2026-12-07T01:00:30Z",
			"anthropic-ratelimit-input-tokens-remaining", "30000", "anthropic-ratelimit-input-tokens-reset", "2026-12-07T01:00:02Z",
			"anthropic-ratelimit-output-tokens-remaining", "0", "anthropic-ratelimit-output-tokens-reset", "2026-12-07T01:00:05Z",
			"anthropic-ratelimit-tokens-remaining", "38000", "anthropic-ratelimit-tokens-reset", "2026-12-07T01:00:02Z"),
			pool.Headroom{Requests: lim(49, 30*time.Second), Tokens: lim(38000, 2*time.Second), InputTokens: lim(30000, 2*time.Second), OutputTokens: lim(0, 5*time.Second)}},
		{"anthropic: fractional seconds and an offset", hdr("anthropic-ratelimit-requests-remaining", "5", "anthropic-ratelimit-requests-reset", "2026-12-07T01:00:01.5Z",
			"anthropic-ratelimit-input-tokens-remaining", "7", "anthropic-ratelimit-input-tokens-reset", "2026-12-07T02:00:03+01:00"),
			pool.Headroom{Requests: lim(5, 1500*time.Millisecond), InputTokens: lim(7, 3*time.Second)}},
		{"both wires: OpenAI's", hdr("x-ratelimit-remaining-requests", "9", "x-ratelimit-reset-requests", "1s",
			"anthropic-ratelimit-requests-remaining", "4", "anthropic-ratelimit-requests-reset", "2026-12-07T01:00:30Z"),
			pool.Headroom{Requests: lim(9, time.Second)}},
		{"remaining without reset (Azure)", hdr("x-ratelimit-remaining-requests", "9", "x-ratelimit-remaining-tokens", "900",
			"anthropic-ratelimit-input-tokens-remaining", "5"), pool.Headroom{}},
		{"reset without remaining", hdr("x-ratelimit-reset-requests", "1s", "anthropic-ratelimit-requests-reset", "2026-12-07T01:00:30Z"), pool.Headroom{}},
		{"remaining that does not parse", hdr("x-ratelimit-remaining-requests", "many", "x-ratelimit-reset-requests", "1s",
			"x-ratelimit-remaining-tokens", "1.5", "x-ratelimit-reset-tokens", "1s",
			"anthropic-ratelimit-input-tokens-remaining", "", "anthropic-ratelimit-input-tokens-reset", "2026-12-07T01:00:30Z"), pool.Headroom{}},
		{"negative remaining", hdr("x-ratelimit-remaining-requests", "-1", "x-ratelimit-reset-requests", "1s",
			"anthropic-ratelimit-output-tokens-remaining", "-5", "anthropic-ratelimit-output-tokens-reset", "2026-12-07T01:00:30Z"), pool.Headroom{}},
		{"reset that does not parse", hdr("x-ratelimit-remaining-requests", "1", "x-ratelimit-reset-requests", "60",
			"x-ratelimit-remaining-tokens", "1", "x-ratelimit-reset-tokens", "soon",
			"anthropic-ratelimit-requests-remaining", "1", "anthropic-ratelimit-requests-reset", "2026-12-07 01:00:30",
			"anthropic-ratelimit-input-tokens-remaining", "1", "anthropic-ratelimit-input-tokens-reset", "1s"), pool.Headroom{}},
		{"a reset in the past is passed on", hdr("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "0s",
			"anthropic-ratelimit-input-tokens-remaining", "0", "anthropic-ratelimit-input-tokens-reset", "2026-12-07T00:59:00Z"),
			pool.Headroom{Requests: lim(0, 0), InputTokens: lim(0, -time.Minute)}},
		{"a reset beyond a day", hdr("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "25h",
			"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", "9999-12-31T23:59:59Z",
			"x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "24h"),
			pool.Headroom{Tokens: lim(0, 24*time.Hour)}},
		{"the first value", hdr("x-ratelimit-remaining-requests", "2", "x-ratelimit-remaining-requests", "7", "x-ratelimit-reset-requests", "1s"),
			pool.Headroom{Requests: lim(2, time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := headroomOf(tc.h, now); !equalHeadroom(got, tc.want) {
				t.Errorf("headroomOf = %+v\nwant         %+v", got, tc.want)
			}
		})
	}
}

func equalHeadroom(a, b pool.Headroom) bool {
	eq := func(x, y pool.Limit) bool { return x.Remaining == y.Remaining && x.Reset.Equal(y.Reset) }
	return eq(a.Requests, b.Requests) && eq(a.Tokens, b.Tokens) && eq(a.InputTokens, b.InputTokens) && eq(a.OutputTokens, b.OutputTokens)
}

// An answer without rate-limit headers costs the read no allocation: it
// runs on every answer of every member.
func TestHeadroomOfAllocatesNothingWithoutHeaders(t *testing.T) {
	h := hdr("Content-Type", "application/json", "Date", "Mon, 07 Dec 2026 01:00:00 GMT", "X-Request-Id", "req_1", "Openai-Processing-Ms", "212")
	now := time.Now()
	if n := testing.AllocsPerRun(100, func() { _ = headroomOf(h, now) }); n != 0 {
		t.Errorf("headroomOf allocates %v times on an answer without rate-limit headers", n)
	}
}

// The resets' parsers never panic; a duration Go writes reads back as
// itself, and so does an RFC 3339 time.
func FuzzHeadroomResets(f *testing.F) {
	f.Add("6m0s", int64(20*time.Millisecond), int64(1796605230), int64(500))
	f.Add("2026-12-07T01:00:30Z", int64(-time.Second), int64(0), int64(0))
	f.Add("1h2m3.5s", int64(1<<62), int64(-62135596800), int64(999999999))
	f.Add("9223372036854775807ns", int64(0), int64(253402300799), int64(0))
	f.Fuzz(func(t *testing.T, s string, n, sec, nsec int64) {
		now := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
		_, _ = relativeReset(s, now)
		_, _ = absoluteReset(s)
		h := headroomOf(hdr("x-ratelimit-remaining-requests", s, "x-ratelimit-reset-requests", s,
			"anthropic-ratelimit-input-tokens-remaining", "1", "anthropic-ratelimit-input-tokens-reset", s), now)
		for _, l := range []pool.Limit{h.Requests, h.InputTokens} {
			if l.Remaining < 0 || !l.Reset.IsZero() && l.Reset.Sub(now) > maxReset {
				t.Fatalf("%q read as %+v", s, l)
			}
		}
		d := time.Duration(n)
		if got, ok := relativeReset(d.String(), now); !ok || !got.Equal(now.Add(d)) {
			t.Fatalf("%v written as %q reads as %v, %v; want %v", d, d.String(), got, ok, now.Add(d))
		}
		at := time.Unix(sec%253402300800, nsec%1e9).UTC() // years 1 to 9999, as RFC 3339 writes them
		if at.Year() < 1 {
			return
		}
		if got, ok := absoluteReset(at.Format(time.RFC3339Nano)); !ok || !got.Equal(at) {
			t.Fatalf("%v written as %q reads as %v, %v", at, at.Format(time.RFC3339Nano), got, ok)
		}
	})
}

// The read on every answer: without rate-limit headers (most answers of
// an unlimited deployment) and with each wire's.
func BenchmarkHeadroomOf(b *testing.B) {
	base := []string{"Content-Type", "application/json", "Date", "Mon, 07 Dec 2026 01:00:00 GMT", "X-Request-Id", "req_1"}
	for _, bc := range []struct {
		name string
		h    http.Header
	}{
		{"none", hdr(base...)},
		{"openai", hdr(append(base, "x-ratelimit-remaining-requests", "59", "x-ratelimit-reset-requests", "1s",
			"x-ratelimit-remaining-tokens", "149984", "x-ratelimit-reset-tokens", "6m0s")...)},
		{"anthropic", hdr(append(base, "anthropic-ratelimit-requests-remaining", "49", "anthropic-ratelimit-requests-reset", "2026-12-07T01:00:30Z",
			"anthropic-ratelimit-input-tokens-remaining", "30000", "anthropic-ratelimit-input-tokens-reset", "2026-12-07T01:00:02Z",
			"anthropic-ratelimit-output-tokens-remaining", "8000", "anthropic-ratelimit-output-tokens-reset", "2026-12-07T01:00:05Z")...)},
	} {
		now := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = headroomOf(bc.h, now)
			}
		})
	}
}
