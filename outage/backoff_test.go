package outage

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestBackoffGolden: the long brownout's table, without and with the backoff
// of repeated trips, matches testdata/brownout-backoff.golden.
func TestBackoffGolden(t *testing.T) {
	res, err := SimulateBackoff(context.Background(), LongBrownout())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "backoff", filepath.Join("testdata", "brownout-backoff.golden"), buf.Bytes())
}

// TestBackoffWins (issue 34's goal, SEMANTICS §9.1): on the long brownout and
// seeds 1 to 10, the backoff keeps the sick service at no more than 12 % of
// the calls made while it is sick (without it, every recovery closes into an
// empty window that needs 20 more calls to trip again: more than 20 %),
// trips no later, and the breaker closes once the service is fixed.
func TestBackoffWins(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		s := LongBrownout()
		s.Seed = seed
		res, err := SimulateBackoff(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		a, b := res.Without, res.With
		if 100*b.SickAttempts > 12*b.SickCalls || 100*a.SickAttempts <= 20*a.SickCalls {
			t.Errorf("seed %d: %d and %d attempts of %d calls while sick reached the service; want more than 20 %% without the backoff, at most 12 %% with it",
				seed, a.SickAttempts, b.SickAttempts, b.SickCalls)
		}
		if b.FirstTrip != a.FirstTrip || b.Trips >= a.Trips || b.Closed < 0 {
			t.Errorf("seed %d: with the backoff first trip %v (without %v), %d trips (without %d), closed after the fix %v",
				seed, b.FirstTrip, a.FirstTrip, b.Trips, a.Trips, b.Closed)
		}
	}
}

// TestBackoffInvalid: a factor that is not above 1 has nothing to compare, and
// a bad one is the breaker's error, each a *FieldError naming RecoveryBackoff.
func TestBackoffInvalid(t *testing.T) {
	for _, f := range []float64{0, 1, 0.5, -2} {
		s := LongBrownout()
		s.RecoveryBackoff = f
		_, err := SimulateBackoff(context.Background(), s)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "RecoveryBackoff" {
			t.Errorf("RecoveryBackoff %v: err = %v, want a *FieldError for RecoveryBackoff", f, err)
		}
	}
	s := LongBrownout()
	s.MaxRecoveryTimeout = s.Cooldown / 2
	var fe *FieldError
	if _, err := SimulateBackoff(context.Background(), s); !errors.As(err, &fe) || fe.Field != "MaxRecoveryTimeout" {
		t.Errorf("MaxRecoveryTimeout below the cooldown: err = %v, want a *FieldError for it", err)
	}
}
