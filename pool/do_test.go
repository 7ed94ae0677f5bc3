package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// doFixture is a fixture whose pool's Do reads the fixture's clock.
func doFixture(t *testing.T, n int) *fixture {
	var c *clock
	f := newFixture(t, equal(n), func(s *pool.Settings, bs []breaker.Settings) {
		c = &clock{t: t0}
		s.Now = c.Now
		for i := range bs {
			bs[i].Now = c.Now
		}
	})
	f.c = c
	return f
}

// TestDo: Do runs one pool attempt, member after member, and settles each.
func TestDo(t *testing.T) {
	errBoom := errors.New("boom")
	rows := []struct {
		name    string
		answers []error // by call
		want    pool.Result
		wantErr error
		calls   int
	}{
		{name: "the first member serves", answers: []error{nil},
			want: pool.Result{Outcome: pool.Served, Tried: 1}, calls: 1},
		{name: "a failure moves on to the next member at once", answers: []error{errBoom, nil},
			want: pool.Result{Outcome: pool.Served, Tried: 2}, calls: 2},
		{name: "an answer with no verdict moves on too", answers: []error{pool.NoVerdictError(errBoom), nil},
			want: pool.Result{Outcome: pool.Served, Tried: 2}, calls: 2},
		{name: "every member rate limited: RateLimit, the last error", answers: []error{
			pool.RateLimitedError(errBoom, time.Time{}), pool.QuotaError(errBoom, time.Time{}), pool.RateLimitedError(errBoom, time.Time{})},
			want: pool.Result{Outcome: pool.Failed, Tried: 3, Kind: pool.RateLimit}, wantErr: errBoom, calls: 3},
		{name: "the caller gave up: a cancel ends the pool attempt", answers: []error{context.Canceled},
			want: pool.Result{Outcome: pool.Unsettled, Tried: 1}, wantErr: context.Canceled, calls: 1},
		{name: "a deadline is a timeout of the member", answers: []error{context.DeadlineExceeded, context.DeadlineExceeded, context.DeadlineExceeded},
			want: pool.Result{Outcome: pool.Failed, Tried: 3, Timeout: true}, wantErr: context.DeadlineExceeded, calls: 3},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := doFixture(t, 3)
			var r pool.Request
			calls := 0
			seen := map[int]bool{}
			_, res, err := pool.Do(context.Background(), f.p, &r, pool.Need{}, func(ctx context.Context, a pool.Attempt) (int, error) {
				if seen[a.Member()] {
					t.Fatalf("m%d called twice", a.Member())
				}
				seen[a.Member()] = true
				if d, ok := ctx.Deadline(); !ok || d.IsZero() {
					t.Errorf("fn's context has no deadline")
				}
				calls++
				return calls, row.answers[calls-1]
			})
			if res != row.want || calls != row.calls || !errors.Is(err, row.wantErr) {
				t.Fatalf("Do = %+v, %v after %d calls; want %+v, %v after %d", res, err, calls, row.want, row.wantErr, row.calls)
			}
			for i := range f.bs {
				if n := f.p.Status(f.c.Now(), i).InFlight; n != 0 {
					t.Fatalf("m%d in flight %d after Do", i, n)
				}
			}
		})
	}
}

// TestDoUnavailable: with no member admitted Do returns the
// *UnavailableError and a skipped attempt.
func TestDoUnavailable(t *testing.T) {
	f := doFixture(t, 2)
	f.trip(t, 0)
	f.trip(t, 1)
	var r pool.Request
	_, res, err := pool.Do(context.Background(), f.p, &r, pool.Need{}, func(context.Context, pool.Attempt) (int, error) {
		t.Fatal("fn called")
		return 0, nil
	})
	var ue *pool.UnavailableError
	if !errors.As(err, &ue) || res.Outcome != pool.Skipped || !ue.RetryAt.Equal(t0.Add(30*time.Second)) {
		t.Fatalf("Do = %+v, %v; want Skipped and an *UnavailableError retrying at +30s", res, err)
	}
}

// TestDoPanic: a panic in fn settles its attempt as a failure, and the
// panic continues.
func TestDoPanic(t *testing.T) {
	f := doFixture(t, 2)
	var r pool.Request
	var member int
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the panic did not continue")
			}
		}()
		pool.Do(context.Background(), f.p, &r, pool.Need{}, func(_ context.Context, a pool.Attempt) (int, error) {
			member = a.Member()
			panic("fn")
		})
	}()
	st := f.p.Status(f.c.Now(), member)
	if st.InFlight != 0 || st.Breaker.ConsecutiveFailures != 1 {
		t.Fatalf("after the panic: in flight %d, failures %d; want 0 and 1", st.InFlight, st.Breaker.ConsecutiveFailures)
	}
}

// TestDoCallerDeadline: when the caller's deadline ends a member's call,
// the member has timed out and no other member is tried: no time is left.
func TestDoCallerDeadline(t *testing.T) {
	f := doFixture(t, 3)
	var r pool.Request
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, res, err := pool.Do(ctx, f.p, &r, pool.Need{}, func(ctx context.Context, a pool.Attempt) (int, error) {
		calls++
		cancel() // the caller gives up during the call
		return 0, errors.New("connection closed")
	})
	if calls != 1 || res.Outcome != pool.Unsettled || err == nil {
		t.Fatalf("Do = %+v, %v after %d calls; want one cancelled attempt", res, err, calls)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), -time.Second) // already past
	defer dcancel()
	var r2 pool.Request
	calls = 0
	_, res, _ = pool.Do(dctx, f.p, &r2, pool.Need{}, func(ctx context.Context, a pool.Attempt) (int, error) {
		calls++
		return 0, ctx.Err()
	})
	if calls != 1 || res.Outcome != pool.Failed || !res.Timeout {
		t.Fatalf("Do = %+v after %d calls; want one timed-out attempt", res, calls)
	}
}
