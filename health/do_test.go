package health

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// TestDo: the registry's gate-call-verdict helper records each call in the
// tool's stats and its breaker, refuses without calling fn, and settles a
// panic as a failure.
func TestDo(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	v, err := Do(ctx, f.r, "a", func(context.Context) (int, error) {
		f.clock.Advance(time.Second)
		return 7, nil
	})
	if v != 7 || err != nil {
		t.Fatalf("Do = %v, %v", v, err)
	}
	if s := f.r.Stats("a"); s.Calls != 1 || s.Successes != 1 || s.TotalDuration != time.Second {
		t.Fatalf("stats after a success: %+v", s)
	}
	if _, err := Do(ctx, f.r, "a", func(context.Context) (int, error) { return 0, errDown }); err != errDown {
		t.Fatalf("Do returned %v, want fn's error", err)
	}
	if _, err := Do(ctx, f.r, "a", func(context.Context) (int, error) { return 0, context.Canceled }); err != context.Canceled {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("the panic did not continue")
			}
		}()
		_, _ = Do(ctx, f.r, "a", func(context.Context) (int, error) { panic("boom") })
	}()
	if s := f.r.Stats("a"); s.Calls != 3 || s.Failures != 2 {
		t.Fatalf("stats: %+v; want 3 calls, 2 failures (the cancel records nothing)", s)
	}
	if st := f.r.Breaker("a").State(); st != breaker.Open {
		t.Fatalf("state %v after two failures, want open", st)
	}
	called := false
	_, err = Do(ctx, f.r, "a", func(context.Context) (int, error) { called = true; return 0, nil })
	if !errors.Is(err, breaker.ErrOpen) || called {
		t.Fatalf("Do on an open breaker: err %v, fn called %v", err, called)
	}
	if s := f.r.Stats("a"); s.Calls != 3 {
		t.Fatalf("a refusal was recorded: %+v", s)
	}
}

// TestDoProbeBoundedByLease: a probe through health.Do is cut at its lease
// end, settles as a failure dated at the lease end (recorded in the stats
// with the lease as its duration), and frees its caller at that instant.
func TestDoProbeBoundedByLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, err := NewRegistry(breaker.Settings{FailureThreshold: 1, RecoveryDuration: time.Second, ProbeTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := r.Allow("slow")
		p.Failure()
		time.Sleep(time.Second)
		start := time.Now()
		var probe bool
		_, err = Do(context.Background(), r, "slow", func(ctx context.Context) (int, error) {
			dl, ok := ctx.Deadline()
			probe = ok && dl.Equal(start.Add(5*time.Second))
			<-ctx.Done()
			return 0, ctx.Err()
		})
		if !probe {
			t.Fatal("the probe's context does not end at its lease end")
		}
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != 5*time.Second {
			t.Fatalf("err %v after %v; want DeadlineExceeded after the 5s lease", err, time.Since(start))
		}
		s := r.Breaker("slow").Snapshot()
		if s.State != breaker.Open || !s.LastFailure.Equal(start.Add(5*time.Second)) {
			t.Fatalf("snapshot %+v; want open, last failure at the lease end", s)
		}
		if st := r.Stats("slow"); st.Failures != 2 || st.MaxDuration != 5*time.Second {
			t.Fatalf("stats %+v; want 2 failures, the probe lasting 5s", st)
		}
	})
}

// TestPermitDeadline: a registry probe permit carries its lease end.
func TestPermitDeadline(t *testing.T) {
	f := newFixture(t)
	if _, ok := (Permit{}).Deadline(); ok {
		t.Fatal("zero Permit has a deadline")
	}
	f.trip(t, "a")
	f.clock.Advance(30 * time.Second)
	p, err := f.r.Allow("a")
	if err != nil || !p.IsProbe() {
		t.Fatalf("no probe: %v", err)
	}
	if d, ok := p.Deadline(); !ok || !d.Equal(f.clock.Now().Add(10*time.Second)) {
		t.Fatalf("Deadline() = %v, %v", d, ok)
	}
	p.Cancel()
}
