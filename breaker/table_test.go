package breaker

import (
	"context"
	"fmt"
	"testing"
	"time"
)

var zeroTime time.Time

// TestTransitionTable has one case per row of docs/SEMANTICS.md section 1, named
// after the row ("From/event -> To").
func TestTransitionTable(t *testing.T) {
	tests := []struct {
		name string
		run  func(f *fixture)
	}{
		{"Closed/success -> Closed (consecutive failures = 0)", func(f *fixture) {
			f.fail(2)
			last := f.now()
			f.allow().Success()
			f.want(Closed, 0, last, zeroTime)
			f.wantEvents()
		}},
		{"Closed/failure reaching threshold -> Open (lastFailure = now, probe slot cleared)", func(f *fixture) {
			f.fail(2)
			f.clock.Advance(time.Second)
			f.allow().Failure()
			f.want(Open, 3, f.now(), zeroTime)
			f.wantEvents("search:closed->open")
		}},
		{"Closed/failure below threshold -> Closed (count + 1, lastFailure = now)", func(f *fixture) {
			f.allow().Failure()
			f.want(Closed, 1, f.now(), zeroTime)
			f.clock.Advance(time.Second)
			f.allow().Failure()
			f.want(Closed, 2, f.now(), zeroTime)
			f.wantEvents()
		}},
		{"Open/gate before cooldown -> Open (refused, soft)", func(f *fixture) {
			f.trip()
			tripped := f.now()
			f.clock.Advance(testRecovery - time.Second)
			e := f.refuse()
			if e.State != Open || e.RetryIn != time.Second || e.Name != "search" {
				t.Fatalf("refusal %+v, want Open, RetryIn 1s, name search", *e)
			}
			f.want(Open, 3, tripped, zeroTime)
			f.wantEvents()
		}},
		{"Open/gate at cooldown -> HalfOpen (probeStartedAt = now, the caller is the probe)", func(f *fixture) {
			f.trip()
			tripped := f.now()
			f.clock.Advance(testRecovery)
			if p := f.allow(); !p.IsProbe() {
				t.Fatal("the caller that asked is not the probe")
			}
			f.want(HalfOpen, 3, tripped, f.now())
			f.wantEvents("search:open->half-open")
		}},
		{"HalfOpen lease live/gate -> HalfOpen (refused: a probe is in flight)", func(f *fixture) {
			f.probe()
			started := f.now()
			f.clock.Advance(testLease - 3*time.Second)
			e := f.refuse()
			if e.State != HalfOpen || e.RetryIn != 3*time.Second {
				t.Fatalf("refusal %+v, want HalfOpen, RetryIn 3s (until the lease ends)", *e)
			}
			f.want(HalfOpen, 3, started.Add(-testRecovery), started)
			f.wantEvents()
		}},
		{"HalfOpen lease live/probe succeeds -> Closed (counters zeroed)", func(f *fixture) {
			p := f.probe()
			f.clock.Advance(testLease - time.Nanosecond)
			p.Success()
			f.want(Closed, 0, f.now().Add(-testLease+time.Nanosecond-testRecovery), zeroTime)
			f.wantEvents("search:half-open->closed")
			f.allow()
		}},
		{"HalfOpen/any failure (the probe's) -> Open (lastFailure = now)", func(f *fixture) {
			p := f.probe()
			f.clock.Advance(time.Second)
			p.Failure()
			f.want(Open, 4, f.now(), zeroTime)
			f.wantEvents("search:half-open->open")
			f.clock.Advance(testRecovery - time.Millisecond)
			if e := f.refuse(); e.RetryIn != time.Millisecond {
				t.Fatalf("cooldown does not restart from the failure: RetryIn %v", e.RetryIn)
			}
		}},
		{"HalfOpen/any failure (a straggler's) -> Open (lastFailure = now)", func(f *fixture) {
			straggler := f.allow()
			f.probe()
			f.clock.Advance(time.Second)
			straggler.Failure()
			f.want(Open, 4, f.now(), zeroTime)
			f.wantEvents("search:half-open->open")
		}},
		{"HalfOpen/any failure (no probe in flight) -> Open (lastFailure = now)", func(f *fixture) {
			straggler := f.allow()
			f.probe().Cancel()
			f.clock.Advance(time.Second)
			straggler.Failure()
			f.want(Open, 4, f.now(), zeroTime)
			f.wantEvents("search:half-open->open")
		}},
		{"HalfOpen/lease expired -> Open (lastFailure backdated to the lease end, slot cleared)", func(f *fixture) {
			f.probe()
			leaseEnd := f.now().Add(testLease)
			f.clock.Advance(testLease)
			f.want(Open, 3, leaseEnd, zeroTime) // pure reads already see it
			f.wantEvents()                      // ...without changing anything
			if f.b.WouldAllow() {
				t.Fatal("WouldAllow right after the lease expired")
			}
			e := f.refuse()
			if e.State != Open || e.RetryIn != testRecovery {
				t.Fatalf("refusal %+v, want Open, RetryIn = the cooldown from the lease end", *e)
			}
			f.want(Open, 3, leaseEnd, zeroTime)
			f.wantEvents("search:half-open->open")
		}},
		{"HalfOpen/lease expired -> Open, and the same gate call grants a fresh probe", func(f *fixture) {
			f.probe()
			leaseEnd := f.now().Add(testLease)
			f.clock.Advance(testLease + testRecovery)
			if !f.b.WouldAllow() {
				t.Fatal("WouldAllow false once lease end + cooldown has passed")
			}
			if p := f.allow(); !p.IsProbe() {
				t.Fatal("the gate call that expired the lease did not grant a fresh probe")
			}
			f.want(HalfOpen, 3, leaseEnd, f.now())
			f.wantEvents("search:half-open->open", "search:open->half-open")
		}},
		{"HalfOpen lease expired/late probe success -> Open (re-armed, backdated, does not close)", func(f *fixture) {
			p := f.probe()
			leaseEnd := f.now().Add(testLease)
			f.clock.Advance(testLease + time.Second)
			p.Success()
			f.want(Open, 3, leaseEnd, zeroTime)
			f.wantEvents("search:half-open->open")
		}},
		{"Open/a success arrives -> Open (ignored)", func(f *fixture) {
			straggler := f.allow()
			f.trip()
			tripped := f.now()
			f.clock.Advance(time.Second)
			straggler.Success()
			f.want(Open, 3, tripped, zeroTime)
			f.wantEvents()
		}},
		{"Open/a failure arrives -> Open (lastFailure = now: the wait restarts)", func(f *fixture) {
			straggler := f.allow()
			f.trip()
			f.clock.Advance(20 * time.Second)
			straggler.Failure()
			f.want(Open, 4, f.now(), zeroTime)
			f.wantEvents()
			f.clock.Advance(20 * time.Second)
			if e := f.refuse(); e.RetryIn != 10*time.Second {
				t.Fatalf("RetryIn %v, want 10s (cooldown from the late failure)", e.RetryIn)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(newFixture(t)) })
	}
}

// TestDecisions covers the Decision paragraphs of docs/SEMANTICS.md section 1.
func TestDecisions(t *testing.T) {
	tests := []struct {
		name string
		run  func(f *fixture)
	}{
		{"permits/straggler success in HalfOpen never closes", func(f *fixture) {
			straggler := f.allow()
			f.probe()
			straggler.Success()
			f.want(HalfOpen, 3, f.now().Add(-testRecovery), f.now())
			f.wantEvents()
		}},
		{"permits/old probe's success cannot close a newer probe's HalfOpen", func(f *fixture) {
			old := f.probe()
			f.clock.Advance(testLease + testRecovery)
			fresh := f.allow()
			if !fresh.IsProbe() {
				t.Fatal("no fresh probe")
			}
			f.takeEvents()
			old.Success()
			f.want(HalfOpen, 3, f.now().Add(-testRecovery), f.now())
			fresh.Success()
			f.want(Closed, 0, f.now().Add(-testRecovery), zeroTime)
			f.wantEvents("search:half-open->closed")
		}},
		{"permits/cancelled probe's later success does not close", func(f *fixture) {
			p := f.probe()
			p.Cancel()
			p.Success()
			f.want(HalfOpen, 3, f.now().Add(-testRecovery), zeroTime)
			q := f.allow()
			p.Success() // still the old generation
			f.want(HalfOpen, 3, f.now().Add(-testRecovery), f.now())
			q.Success()
			f.want(Closed, 0, f.now().Add(-testRecovery), zeroTime)
		}},
		{"cancel/frees the probe slot: the next gate call is the probe", func(f *fixture) {
			p := f.probe()
			f.refuse()
			f.clock.Advance(time.Second)
			p.Cancel()
			f.want(HalfOpen, 3, f.now().Add(-time.Second-testRecovery), zeroTime)
			f.wantEvents()
			if !f.b.WouldAllow() {
				t.Fatal("WouldAllow false with a free probe slot")
			}
			if q := f.allow(); !q.IsProbe() {
				t.Fatal("next gate call after cancel is not the probe")
			}
			f.refuse()
		}},
		{"cancel/non-probe cancel changes no counter", func(f *fixture) {
			f.fail(2)
			before := f.b.Snapshot()
			f.allow().Cancel()
			f.allow().Done(fmt.Errorf("wrapped: %w", context.Canceled))
			if after := f.b.Snapshot(); after != before {
				t.Fatalf("cancel changed %+v into %+v", before, after)
			}
		}},
		{"Done/deadline exceeded is a failure", func(f *fixture) {
			f.allow().Done(context.DeadlineExceeded)
			f.want(Closed, 1, f.now(), zeroTime)
			f.allow().Done(fmt.Errorf("tool: %w", context.DeadlineExceeded))
			f.allow().Done(fmt.Errorf("boom"))
			f.want(Open, 3, f.now(), zeroTime)
		}},
		{"Done/nil is a success that closes from the probe", func(f *fixture) {
			f.probe().Done(nil)
			f.want(Closed, 0, f.now().Add(-testRecovery), zeroTime)
		}},
		{"Done/canceled frees the probe slot", func(f *fixture) {
			f.probe().Done(context.Canceled)
			if !f.allow().IsProbe() {
				t.Fatal("slot not freed")
			}
		}},
		{"zero Permit/does nothing", func(f *fixture) {
			var p Permit
			p.Failure()
			p.Failure()
			p.Failure()
			p.Success()
			p.Cancel()
			p.Done(nil)
			if p.IsProbe() {
				t.Fatal("zero permit is a probe")
			}
			f.want(Closed, 0, zeroTime, zeroTime)
		}},
		{"second settlement/probe success twice closes once", func(f *fixture) {
			p := f.probe()
			p.Success()
			f.allow().Failure()
			p.Success() // in Closed a success zeroes the count (table row)
			f.want(Closed, 0, f.now(), zeroTime)
			f.wantEvents("search:half-open->closed")
		}},
		{"second settlement/cancel twice frees once", func(f *fixture) {
			p := f.probe()
			p.Cancel()
			q := f.allow()
			p.Cancel() // must not free q's slot
			f.refuse()
			q.Success()
			f.want(Closed, 0, f.now().Add(-testRecovery), zeroTime)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(newFixture(t)) })
	}
}
