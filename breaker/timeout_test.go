package breaker

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestTimeoutDating has one case per rev 3 row of docs/SEMANTICS.md section 1
// ("a timeout is dated at its call's start").
func TestTimeoutDating(t *testing.T) {
	tests := []struct {
		name string
		run  func(f *fixture)
	}{
		{"Closed/timeout below threshold -> Closed (lastFailure = the call's start)", func(f *fixture) {
			start := f.now()
			p := f.allow()
			f.clock.Advance(20 * time.Second)
			p.Timeout()
			f.want(Closed, 1, start, zeroTime)
			f.wantEvents()
		}},
		{"Closed/timeout reaching threshold -> Open (the trip dated at the call's start)", func(f *fixture) {
			start := f.now()
			hung := []Permit{f.allow(), f.allow(), f.allow()}
			f.clock.Advance(40 * time.Second) // longer than the cooldown
			for _, p := range hung {
				p.Done(context.DeadlineExceeded)
			}
			f.want(Open, 3, start, zeroTime)
			f.wantEvents("search:closed->open")
			if p := f.allow(); !p.IsProbe() { // the cooldown has passed already
				t.Fatal("the next call after a trip dated in the past is not the probe")
			}
		}},
		{"Closed/timeout never moves lastFailure back (max)", func(f *fixture) {
			hung := f.allow()
			f.clock.Advance(5 * time.Second)
			f.allow().Failure()
			fast := f.now()
			f.clock.Advance(5 * time.Second)
			hung.Timeout()
			f.want(Closed, 2, fast, zeroTime)
			f.allow().Failure() // a fresh failure dates the trip at now
			f.want(Open, 3, f.now(), zeroTime)
		}},
		{"Closed/trip by a timeout after a later fast failure -> Open dated at the fast failure", func(f *fixture) {
			hung := f.allow()
			f.clock.Advance(time.Second)
			f.fail(2)
			fast := f.now()
			f.clock.Advance(10 * time.Second)
			hung.Timeout()
			f.want(Open, 3, fast, zeroTime)
			if e := f.refuse(); e.RetryIn != 20*time.Second {
				t.Fatalf("RetryIn %v, want 20s (cooldown from the fast failure)", e.RetryIn)
			}
		}},
		{"Open/a timeout arrives -> Open (lastFailure = max(lastFailure, its start))", func(f *fixture) {
			early := f.allow()
			f.clock.Advance(time.Second)
			late := f.allow()
			f.clock.Advance(time.Second)
			f.trip()
			tripped := f.now()
			f.clock.Advance(10 * time.Second)
			early.Timeout() // started before the trip: does not move it back
			f.want(Open, 4, tripped, zeroTime)
			late.Timeout()
			f.want(Open, 5, tripped, zeroTime)
			f.wantEvents()
		}},
		{"Open/a timeout of a call started after the trip's date restarts the wait from its start", func(f *fixture) {
			start := f.now()
			hung := []Permit{f.allow(), f.allow(), f.allow()}
			f.clock.Advance(5 * time.Second)
			straggler := f.allow() // started after the hung calls, before the trip
			f.clock.Advance(25 * time.Second)
			for _, p := range hung {
				p.Timeout()
			}
			f.want(Open, 3, start, zeroTime)
			straggler.TimeoutAfter(25 * time.Second) // §8.4: the caller says how long it ran
			f.want(Open, 4, start.Add(5*time.Second), zeroTime)
			if e := f.refuse(); e.RetryIn != 5*time.Second {
				t.Fatalf("RetryIn %v, want 5s", e.RetryIn)
			}
		}},
		{"HalfOpen/a non-probe timeout -> Open (dated at its start, never back)", func(f *fixture) {
			straggler := f.allow()
			probe := f.probe()
			f.clock.Advance(time.Second)
			straggler.Timeout()
			f.want(Open, 4, t0.Add(0), zeroTime) // the trip was at t0: max(t0, t0)
			f.wantEvents("search:half-open->open")
			probe.Success() // its slot is gone: ignored
			f.want(Open, 4, t0, zeroTime)
		}},
		{"HalfOpen/the probe's timeout before its lease -> Open (dated now)", func(f *fixture) {
			p := f.probe()
			f.clock.Advance(testLease / 2)
			p.Timeout()
			f.want(Open, 4, f.now(), zeroTime)
		}},
		{"HalfOpen/the probe cut at its lease -> Open (dated at the lease end)", func(f *fixture) {
			p := f.probe()
			end, _ := p.Deadline()
			f.clock.Advance(testLease + 3*time.Second) // reported late
			p.Done(fmt.Errorf("search: %w", context.DeadlineExceeded))
			f.want(Open, 4, end, zeroTime)
		}},
		{"stale timeout -> nothing (a later call was counted a success)", func(f *fixture) {
			hung := f.allow()
			f.clock.Advance(time.Second)
			f.allow().Failure()
			f.allow().Success() // resets the count: hung started before it
			last := f.b.Snapshot().LastFailure
			f.clock.Advance(time.Second)
			hung.Timeout()
			f.want(Closed, 0, last, zeroTime)
		}},
		{"Failure is still dated now", func(f *fixture) {
			p := f.allow()
			f.clock.Advance(20 * time.Second)
			p.Done(errors.New("boom"))
			f.want(Closed, 1, f.now(), zeroTime)
		}},
		{"Cancel is still no verdict", func(f *fixture) {
			p := f.allow()
			f.clock.Advance(20 * time.Second)
			p.Done(context.Canceled)
			f.want(Closed, 0, zeroTime, zeroTime)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(newFixture(t)) })
	}
}

// TestDoReportsTimeouts checks that Do settles a call cut by its deadline as
// a timeout (dated at its start), whatever error fn returns.
func TestDoReportsTimeouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  func(ctx context.Context) error
		want func(f *fixture, start time.Time) (int, time.Time)
	}{
		{"DeadlineExceeded", func(ctx context.Context) error { return ctx.Err() },
			func(f *fixture, start time.Time) (int, time.Time) { return 1, start }},
		{"own error after the deadline", func(context.Context) error { return errors.New("read: i/o timeout") },
			func(f *fixture, start time.Time) (int, time.Time) { return 1, start }},
		{"fast error (no deadline passed)", nil,
			func(f *fixture, start time.Time) (int, time.Time) { return 1, f.now() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			start := f.now()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var fctx context.Context = ctx
			if tc.err != nil {
				c, cancelD := context.WithDeadline(ctx, time.Now().Add(-time.Second))
				defer cancelD()
				fctx = c
			}
			_, _ = Do(fctx, f.b, func(ctx context.Context) (int, error) {
				f.clock.Advance(20 * time.Second) // the call hangs
				if tc.err == nil {
					return 0, errors.New("refused")
				}
				return 0, tc.err(ctx)
			})
			n, last := tc.want(f, start)
			f.want(Closed, n, last, zeroTime)
		})
	}
}
