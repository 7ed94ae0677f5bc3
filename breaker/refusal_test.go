package breaker

import (
	"errors"
	"math"
	"testing"
	"time"
)

// FuzzRefusalReuse checks the division-free test refusal uses to reuse the
// last error against roundUpMillis itself: for a previous wait prev and a new
// wait d, the last error (RetryIn = roundUpMillis(prev)) is reused exactly
// when roundUpMillis(d) equals it.
func FuzzRefusalReuse(f *testing.F) {
	for _, c := range [][2]int64{
		{1, 1}, {millis, millis}, {millis, millis + 1}, {millis + 1, 2 * millis},
		{1, millis}, {0, 1}, {math.MaxInt64, math.MaxInt64 - 1}, {maxRounded, maxRounded - millis + 1},
		{maxRounded - 1, maxRounded}, {maxRounded + 1, maxRounded + 2},
	} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, prev, d int64) {
		if prev <= 0 || d <= 0 { // refusals always wait a positive time
			t.Skip()
		}
		b, _ := New(Settings{Name: "t"})
		first := b.refusal(Open, prev)
		if got, want := first.RetryIn, roundUpMillis(prev); int64(got) != want {
			t.Fatalf("refusal(%d).RetryIn = %d, want %d", prev, got, want)
		}
		second := b.refusal(Open, d)
		if int64(second.RetryIn) != roundUpMillis(d) {
			t.Fatalf("refusal(%d) after refusal(%d): RetryIn %d, want %d", d, prev, second.RetryIn, roundUpMillis(d))
		}
		if reused, same := second == first, roundUpMillis(d) == roundUpMillis(prev); reused != same {
			t.Fatalf("refusal(%d) after refusal(%d): reused %v, same RetryIn %v", d, prev, reused, same)
		}
	})
}

// TestRefusalTextPrecision: a refusal says when to retry precisely enough to
// act on: below 10s with sub-second precision, never rounded up to 1s.
func TestRefusalTextPrecision(t *testing.T) {
	for _, tc := range []struct {
		cooldown time.Duration
		want     string
	}{
		{10 * time.Millisecond, "retry in 10ms"},
		{250 * time.Millisecond, "retry in 250ms"},
		{9500 * time.Millisecond, "retry in 9.5s"},
		{90 * time.Second, "retry in 1m30s"},
	} {
		t.Run(tc.cooldown.String(), func(t *testing.T) {
			now := t0
			b, err := New(Settings{Name: "t", FailureThreshold: 1, RecoveryDuration: tc.cooldown, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			p, _ := b.Allow()
			p.Failure()
			_, err = b.Allow()
			want := `tool temporarily unavailable: circuit breaker open for "t"; ` + tc.want
			if err == nil || err.Error() != want {
				t.Fatalf("refusal %v, want %q", err, want)
			}
			var oe *OpenError
			if !errors.As(err, &oe) || oe.RetryIn != tc.cooldown {
				t.Fatalf("RetryIn %v, want %v", oe.RetryIn, tc.cooldown)
			}
		})
	}
}

func TestRoundRetry(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want string
	}{
		{-time.Second, "0s"},
		{0, "0s"},
		{time.Nanosecond, "1ms"},
		{10 * time.Millisecond, "10ms"},
		{250*time.Millisecond + time.Nanosecond, "251ms"},
		{999 * time.Millisecond, "999ms"},
		{999*time.Millisecond + 1, "1s"},
		{time.Second, "1s"},
		{1250 * time.Millisecond, "1.3s"},
		{9500 * time.Millisecond, "9.5s"},
		{9900*time.Millisecond + 1, "10s"},
		{10*time.Second + 1, "11s"},
		{29400 * time.Millisecond, "30s"},
		{90 * time.Second, "1m30s"},
		{math.MaxInt64, time.Duration(math.MaxInt64).String()},
	} {
		if got := RoundRetry(tc.in).String(); got != tc.want {
			t.Errorf("RoundRetry(%v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
