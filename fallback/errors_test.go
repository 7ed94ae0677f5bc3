package fallback

import (
	"strings"
	"testing"
	"time"
)

// TestExhaustedErrorRoundsUp: the wait reads as every wait does (rounded up,
// as breaker.RoundRetry does), never as a raw duration.
func TestExhaustedErrorRoundsUp(t *testing.T) {
	for d, want := range map[time.Duration]string{
		4996438811:              "may be probed in 5s",
		1234 * time.Millisecond: "may be probed in 1.3s",
		1:                       "may be probed in 1ms",
		0:                       "may be probed in 0s",
	} {
		e := &ExhaustedError{Primary: "a", Chain: []string{"b"}, State: Fallback, RetryIn: d}
		if got := e.Error(); !strings.HasSuffix(got, `primary "a" `+want) {
			t.Errorf("RetryIn %v: %q, want it to end %q", d, got, want)
		}
	}
}
