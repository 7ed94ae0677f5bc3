package fallback

import (
	"testing"
	"time"
)

// TestClockSinceMatchesSub checks that the monotonic clock's since, which
// skips building a time.Time, equals now().Sub for the times a manager stores
// (built by the same clock) and for times it never stores (zero, wall-only,
// far away), where it must saturate like time.Time.Sub.
func TestClockSinceMatchesSub(t *testing.T) {
	epoch := time.Now()
	earlier := clock{epoch: &epoch}
	stored := earlier.now() // a trip or probe time, as the manager stores it
	for name, at := range map[string]time.Time{
		"stored":     stored,
		"epoch":      epoch,
		"zero":       {},
		"wall only":  epoch.Round(0).Add(-time.Hour),
		"far past":   time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		"far future": time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC),
		"mono later": epoch.Add(200 * 365 * 24 * time.Hour),
		"mono min":   epoch.Add(-1 << 62).Add(-1 << 62),
	} {
		c := clock{epoch: &epoch}
		got := c.since(at)
		if want := c.now().Sub(at); got != want {
			t.Errorf("%s: since = %v, now().Sub = %v", name, got, want)
		}
	}
}
