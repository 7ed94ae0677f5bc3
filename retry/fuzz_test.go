package retry

import (
	"math"
	"math/big"
	"testing"
	"time"
)

// FuzzDelay checks Delay for any retry, draw, durations, factor and jitter:
// never negative, never above the documented cap, never overflowing, and a
// base equal to min(BaseDelay·2^retry, MaxDelay) computed with big integers.
func FuzzDelay(f *testing.F) {
	f.Add(0, 0.5, int64(0), int64(0), 0.0, uint8(0))
	f.Add(3, 0.99, int64(100e6), int64(10e9), 0.1, uint8(1))
	f.Add(62, 0.999, int64(1), int64(math.MaxInt64), 1.0, uint8(1))
	f.Add(math.MaxInt, 1.0, int64(math.MaxInt64), int64(math.MaxInt64), 1.0, uint8(1))
	f.Add(-5, math.NaN(), int64(-1), int64(-1), math.NaN(), uint8(7))
	f.Add(1000, math.Inf(1), int64(3), int64(math.MaxInt64-1), 2.0, uint8(0))
	f.Fuzz(func(t *testing.T, retry int, r float64, base, maxDelay int64, factor float64, jitter uint8) {
		p := Policy{BaseDelay: time.Duration(base), MaxDelay: time.Duration(maxDelay), JitterFactor: factor, Jitter: Jitter(jitter % 3)}
		got := p.Delay(retry, r)
		if got < 0 {
			t.Fatalf("Delay(%d, %v) = %v < 0 for %+v", retry, r, got, p)
		}

		// The documented normalisation, computed independently.
		b, m := p.BaseDelay, p.MaxDelay
		if b <= 0 {
			b = DefaultBaseDelay
		}
		if m <= 0 {
			m = DefaultMaxDelay
		}
		fn := factor
		switch {
		case fn == 0 || math.IsNaN(fn):
			fn = DefaultJitterFactor
		case fn < 0:
			fn = 0
		case fn > 1:
			fn = 1
		}
		limit := m
		if p.Jitter == ProportionalJitter {
			c := float64(m) * (1 + fn)
			if c >= math.MaxInt64 {
				limit = math.MaxInt64
			} else {
				limit = time.Duration(c)
			}
		}
		if got > limit {
			t.Fatalf("Delay(%d, %v) = %v above the cap %v for %+v", retry, r, got, limit, p)
		}

		// The base, exactly: with proportional jitter and r = 0.5 the
		// multiplier is exactly 1, so Delay returns the base rounded to
		// float64 and truncated.
		e := retry
		if e < 0 {
			e = 0
		}
		if e > 200 { // any base >= 1ns reaches the cap well before 2^200
			e = 200
		}
		want := new(big.Int).Lsh(big.NewInt(int64(min(b, m))), uint(e))
		if want.Cmp(big.NewInt(int64(m))) > 0 {
			want.SetInt64(int64(m))
		}
		wantBase := time.Duration(math.MaxInt64)
		if f := float64(want.Int64()); f < math.MaxInt64 {
			wantBase = time.Duration(f)
		}
		q := p
		q.Jitter = ProportionalJitter
		if gotBase := q.Delay(retry, 0.5); gotBase != wantBase {
			t.Fatalf("base for retry %d of %+v = %v, want %v", retry, p, gotBase, wantBase)
		}
		// Full jitter never exceeds the base.
		q.Jitter = FullJitter
		if w := q.Delay(retry, r); w > time.Duration(want.Int64()) {
			t.Fatalf("full jitter %v above the base %v", w, want)
		}
	})
}

// FuzzParseRetryAfter checks that ParseRetryAfter never panics, never
// returns a negative duration, and reports (0, false) whenever it fails.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"120", " 7 ", "0", "-1", "+1", "1.5", "", "99999999999999999999",
		"Wed, 21 Oct 2015 07:28:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
		"Fri, 31 Dec 9999 23:59:59 GMT", "garbage"} {
		f.Add(s, int64(1764442800))
	}
	f.Fuzz(func(t *testing.T, v string, unix int64) {
		now := time.Unix(unix, 0)
		d, ok := ParseRetryAfter(v, now)
		if d < 0 {
			t.Fatalf("ParseRetryAfter(%q) = %v < 0", v, d)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = (%v, false), want 0 on failure", v, d)
		}
		if ms := RetryAfterFromHeader(map[string][]string{"Retry-After-Ms": {v}, "Retry-After": {v}}, now); ms < 0 {
			t.Fatalf("RetryAfterFromHeader(%q) = %v < 0", v, ms)
		}
	})
}
