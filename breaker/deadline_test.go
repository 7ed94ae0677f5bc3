package breaker

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestPermitDeadline: a probe permit's Deadline is its lease end on the
// Settings.Now clock; every other permit has none.
func TestPermitDeadline(t *testing.T) {
	f := newFixture(t)
	if d, ok := (Permit{}).Deadline(); ok || !d.IsZero() {
		t.Fatalf("zero Permit: Deadline() = %v, %v", d, ok)
	}
	if d, ok := f.allow().Deadline(); ok || !d.IsZero() {
		t.Fatalf("closed permit: Deadline() = %v, %v", d, ok)
	}
	p := f.probe()
	granted := f.now()
	d, ok := p.Deadline()
	if !ok || !d.Equal(granted.Add(testLease)) {
		t.Fatalf("probe: Deadline() = %v, %v; want %v, true", d, ok, granted.Add(testLease))
	}
	// The deadline is the lease: at that instant the breaker has re-opened,
	// dated at the deadline.
	f.clock.Advance(testLease)
	f.want(Open, 3, d, zeroTime)
	if d2, ok := p.Deadline(); !ok || !d2.Equal(d) {
		t.Fatalf("Deadline changed after the lease ended: %v, %v", d2, ok)
	}
}

// TestDoProbeBoundedByLease: breaker.Do runs a probe under its lease. A probe
// that hangs is cut at the lease end, settles as a failure dated at the lease
// end, and its caller is freed at that instant; a caller's earlier deadline
// wins; a call that is not a probe runs under the caller's context itself.
func TestDoProbeBoundedByLease(t *testing.T) {
	hang := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	newBreaker := func(t *testing.T) *Breaker {
		b, err := New(Settings{Name: "slow", FailureThreshold: 1, RecoveryDuration: time.Second, ProbeTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := b.Allow()
		p.Failure()
		time.Sleep(time.Second) // synctest: the cooldown passes at once
		return b
	}
	t.Run("cut at the lease end", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t)
			start := time.Now()
			_, err := Do(context.Background(), b, hang)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want context.DeadlineExceeded", err)
			}
			if d := time.Since(start); d != 5*time.Second {
				t.Fatalf("caller freed after %v, want the 5s lease", d)
			}
			s := b.Snapshot()
			if s.State != Open || !s.LastFailure.Equal(start.Add(5*time.Second)) || s.ConsecutiveFailures != 2 {
				t.Fatalf("snapshot %+v; want open, 2 failures, last failure at the lease end %v", s, start.Add(5*time.Second))
			}
			// The cooldown counts from the lease end.
			time.Sleep(time.Second - time.Nanosecond)
			if b.WouldAllow() {
				t.Fatal("probe granted before the cooldown counted from the lease end")
			}
			time.Sleep(time.Nanosecond)
			if !b.WouldAllow() {
				t.Fatal("no probe once the cooldown counted from the lease end passed")
			}
		})
	})
	t.Run("the caller's earlier deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			start := time.Now()
			var dl time.Time
			_, err := Do(ctx, b, func(ctx context.Context) (int, error) {
				dl, _ = ctx.Deadline()
				return hang(ctx)
			})
			if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 2*time.Second || !dl.Equal(start.Add(2*time.Second)) {
				t.Fatalf("err %v after %v (deadline %v); want DeadlineExceeded after 2s", err, time.Since(start), dl)
			}
			if s := b.Snapshot(); s.State != Open || !s.LastFailure.Equal(start.Add(2*time.Second)) {
				t.Fatalf("snapshot %+v; want open, failed at 2s", s)
			}
		})
	})
	t.Run("a probe that answers in time closes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := newBreaker(t)
			start := time.Now()
			var dl time.Time
			_, err := Do(context.Background(), b, func(ctx context.Context) (int, error) {
				dl, _ = ctx.Deadline()
				time.Sleep(5*time.Second - time.Nanosecond)
				return 1, ctx.Err()
			})
			if err != nil || b.State() != Closed || !dl.Equal(start.Add(5*time.Second)) {
				t.Fatalf("err %v, state %v, deadline %v; want nil, closed, %v", err, b.State(), dl, start.Add(5*time.Second))
			}
		})
	})
	t.Run("not a probe: the caller's context", func(t *testing.T) {
		b, _ := New(Settings{})
		ctx := context.WithValue(context.Background(), t, 1)
		_, _ = Do(ctx, b, func(got context.Context) (int, error) {
			if got != ctx {
				t.Error("a closed-path call ran under another context")
			}
			return 0, nil
		})
	})
}

// TestDoProbeLeaseOnNowClock: the lease left is measured on Settings.Now, so
// a probe granted by Allow on a clock that has run ahead gets the rest of the
// lease only (here through Deadline, which callers use the same way).
func TestDoProbeLeaseOnNowClock(t *testing.T) {
	f := newFixture(t)
	f.trip()
	f.clock.Advance(testRecovery)
	var left time.Duration
	_, err := Do(context.Background(), f.b, func(ctx context.Context) (int, error) {
		dl, ok := ctx.Deadline()
		if !ok {
			t.Error("probe context has no deadline")
		}
		left = time.Until(dl)
		return 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if left <= 0 || left > testLease {
		t.Fatalf("probe ran with %v left, want at most the %v lease", left, testLease)
	}
}
