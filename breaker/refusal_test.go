package breaker

import (
	"math"
	"testing"
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
