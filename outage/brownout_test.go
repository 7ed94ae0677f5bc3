package outage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// TestBrownoutGolden: the table of each brownout (failing, slow) matches
// testdata/brownout-<sickness>.golden.
func TestBrownoutGolden(t *testing.T) {
	for _, k := range []Sickness{Failing, Slow} {
		res, err := SimulateBrownout(context.Background(), DefaultBrownout(k))
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := res.WriteTable(&buf); err != nil {
			t.Fatal(err)
		}
		checkGolden(t, k.String(), filepath.Join("testdata", "brownout-"+k.String()+".golden"), buf.Bytes())
	}
}

// TestBrownoutWindowWins: on both brownouts and seeds 1 to 10, the
// consecutive rule never trips (the service never fails three calls in a
// row, and a slow answer is a success), while the rate window trips within
// its window of the start, keeps the sick service under a third of the
// attempts the consecutive-only breaker sends it, fails no more calls, and
// costs the callers less time; once the service is fixed it closes.
func TestBrownoutWindowWins(t *testing.T) {
	for _, k := range []Sickness{Failing, Slow} {
		for seed := uint64(1); seed <= 10; seed++ {
			s := DefaultBrownout(k)
			s.Seed = seed
			res, err := SimulateBrownout(context.Background(), s)
			if err != nil {
				t.Fatal(err)
			}
			c, w := res.Consecutive, res.Window
			label := fmt.Sprintf("%v, seed %d", k, seed)
			for _, m := range []BrownoutMetrics{c, w} {
				if m.Calls != m.Served+m.Backup+m.Failed {
					t.Errorf("%s: calls %d != %d served + %d backup + %d failed", label, m.Calls, m.Served, m.Backup, m.Failed)
				}
			}
			if c.Trips != 0 || c.Backup != 0 || c.FirstTrip != -1 {
				t.Errorf("%s: the consecutive rule tripped: %+v", label, c)
			}
			if w.Trips == 0 || w.FirstTrip < 0 || w.FirstTrip > s.RateWindow {
				t.Errorf("%s: the rate window did not trip within %v: %+v", label, s.RateWindow, w)
			}
			if 3*w.SickAttempts > c.SickAttempts || w.Failed > c.Failed || w.Waiting >= c.Waiting || w.P99 > c.P99 {
				t.Errorf("%s: the rate window does not win:\nconsecutive %+v\nwindow      %+v", label, c, w)
			}
			if w.Closed < 0 || w.Closed > s.Cooldown {
				t.Errorf("%s: closed %v after the fix, want within the cooldown %v", label, w.Closed, s.Cooldown)
			}
		}
	}
}

// TestBrownoutWindowSwitchedOff: with FailureRate and SlowCallRate zero both
// sides are the same breaker and every scored row is a tie (so the wins
// above come from the window).
func TestBrownoutWindowSwitchedOff(t *testing.T) {
	for _, k := range []Sickness{Failing, Slow} {
		s := DefaultBrownout(k)
		s.FailureRate, s.SlowCallRate = 0, 0
		res, err := SimulateBrownout(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if res.Consecutive != res.Window {
			t.Errorf("%v: sides differ with the window off:\n%+v\n%+v", k, res.Consecutive, res.Window)
		}
		for _, row := range res.Rows() {
			if row.Winner != "tie" && row.Winner != "-" {
				t.Errorf("%v: %q won by %s", k, row.Label, row.Winner)
			}
		}
	}
}

func TestBrownFails(t *testing.T) {
	fails := 0
	for n := range 100 {
		if brownFails(n) {
			fails++
			if brownFails(n + 1) {
				t.Fatalf("attempts %d and %d both fail", n, n+1)
			}
		}
	}
	if fails != 30 {
		t.Fatalf("%d of 100 fail, want 30", fails)
	}
}

func TestBrownoutValidate(t *testing.T) {
	tests := []struct {
		change func(*BrownoutScenario)
		field  string
	}{
		{func(s *BrownoutScenario) { s.Callers = 0 }, "Callers"},
		{func(s *BrownoutScenario) { s.Sick = 0 }, "Sick"},
		{func(s *BrownoutScenario) { s.SlowLatency = -time.Second }, "SlowLatency"},
		{func(s *BrownoutScenario) { s.FailureRate = 1.5 }, "FailureRate"},
		{func(s *BrownoutScenario) { s.Interval = time.Microsecond }, "Interval"},
		{func(s *BrownoutScenario) { s.RetryBase = -1 }, "RetryBase"},
	}
	for _, tt := range tests {
		s := DefaultBrownout(Failing)
		tt.change(&s)
		_, err := SimulateBrownout(context.Background(), s)
		if fe, ok := errors.AsType[*FieldError](err); !ok || fe.Field != tt.field {
			t.Errorf("want a FieldError for %s, got %v", tt.field, err)
		}
	}
	if err := DefaultBrownout(Slow).Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := SimulateBrownout(ctx, DefaultBrownout(Failing)); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
