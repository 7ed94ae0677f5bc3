package durtext_test

import (
	"math"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/internal/durtext"
)

func TestRoundUp(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-time.Second, "0s"}, {0, "0s"}, {1, "1ms"}, {time.Millisecond, "1ms"},
		{999*time.Millisecond + 1, "1s"}, {4996438811, "5s"}, {1100 * time.Millisecond, "1.1s"},
		{time.Second + 1, "1.1s"}, {9*time.Second + 950*time.Millisecond, "10s"},
		{10*time.Second + 1, "11s"}, {90 * time.Second, "1m30s"}, {math.MaxInt64, time.Duration(math.MaxInt64).String()},
	} {
		if got := durtext.RoundUp(tc.d).String(); got != tc.want {
			t.Errorf("RoundUp(%v) = %s, want %s", tc.d, got, tc.want)
		}
	}
}

func TestWait(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "now", -1: "now", 1: "in 1ms", 4996438811: "in 5s"} {
		if got := durtext.Wait(d); got != want {
			t.Errorf("Wait(%v) = %q, want %q", d, got, want)
		}
	}
}
