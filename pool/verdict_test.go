package pool_test

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

// TestVerdictTable has one case per clause of the pool attempt's verdict for
// the model breaker (docs/SEMANTICS.md §9.3 rule 6): each member is tried in
// turn and settled as the row says ("ok", "fail", "timeout", "rate", "quota",
// "none" for no verdict, "cancel"); an empty list tries no member.
func TestVerdictTable(t *testing.T) {
	type row struct {
		name     string
		outcomes []string
		want     pool.Result
	}
	rows := []row{
		{name: "no member tried: skipped, no verdict", want: pool.Result{Outcome: pool.Skipped}},
		{name: "a member serves: served", outcomes: []string{"fail", "ok"},
			want: pool.Result{Outcome: pool.Served, Tried: 2}},
		{name: "every member tried failed with a quota: Quota", outcomes: []string{"quota", "quota", "quota"},
			want: pool.Result{Outcome: pool.Failed, Tried: 3, Kind: pool.Quota}},
		{name: "every one with a rate limit of any kind: RateLimit", outcomes: []string{"rate", "quota", "rate"},
			want: pool.Result{Outcome: pool.Failed, Tried: 3, Kind: pool.RateLimit}},
		{name: "a rate limit and another failure: Transient", outcomes: []string{"rate", "fail", "rate"},
			want: pool.Result{Outcome: pool.Failed, Tried: 3, Kind: pool.Transient}},
		{name: "every member timed out: a timeout, Elapsed the pool attempt's run", outcomes: []string{"timeout", "timeout", "timeout"},
			want: pool.Result{Outcome: pool.Failed, Tried: 3, Timeout: true, Elapsed: 3 * time.Second}},
		{name: "a timeout and a failure: no timeout", outcomes: []string{"timeout", "fail", "timeout"},
			want: pool.Result{Outcome: pool.Failed, Tried: 3}},
		{name: "answers with no verdict: tried, not failed, and no verdict", outcomes: []string{"none", "none", "none"},
			want: pool.Result{Outcome: pool.Unsettled, Tried: 3}},
		{name: "a cancelled member: tried, not failed", outcomes: []string{"cancel"},
			want: pool.Result{Outcome: pool.Unsettled, Tried: 1}},
		{name: "no verdict and a quota: not every member failed with a quota, Transient", outcomes: []string{"none", "quota", "quota"},
			want: pool.Result{Outcome: pool.Failed, Tried: 3, Kind: pool.Transient}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := newFixture(t, equal(3), nil)
			var r pool.Request
			for i, o := range row.outcomes {
				a := f.choose(t, &r, pool.Need{CanServe: only(i)})
				now := f.c.Advance(time.Second)
				settleAs(a, now, o, time.Second)
			}
			got := f.p.End(f.c.Now(), &r)
			got.Hint = time.Time{} // the hint has its own table
			if got != row.want {
				t.Fatalf("End = %+v, want %+v", got, row.want)
			}
		})
	}
}

// settleAs settles a at now as outcome o says; ran is a timeout's run.
func settleAs(a pool.Attempt, now time.Time, o string, ran time.Duration) {
	switch o {
	case "ok":
		a.Success(now)
	case "fail":
		a.Failure(now)
	case "timeout":
		a.TimeoutAfter(now, ran)
	case "rate":
		a.RateLimited(now, time.Time{})
	case "quota":
		a.QuotaExhausted(now, time.Time{})
	case "none":
		a.NoVerdict(now)
	case "cancel":
		a.Cancel(now)
	default:
		panic("unknown outcome " + o)
	}
}

// TestVerdictHint: the failed pool attempt's hint is the earliest time at
// which any member may serve again, and none when some member may serve now.
func TestVerdictHint(t *testing.T) {
	t.Run("some member may serve now: no hint", func(t *testing.T) {
		f := newFixture(t, equal(2), nil)
		var r pool.Request
		f.choose(t, &r, pool.Need{CanServe: only(0)}).Failure(f.c.Now())
		if got := f.p.End(f.c.Now(), &r); got.Outcome != pool.Failed || !got.Hint.IsZero() {
			t.Fatalf("End = %+v, want Failed with no hint", got)
		}
	})
	t.Run("every member out: the earliest cooldown end or headroom reset", func(t *testing.T) {
		f := newFixture(t, equal(2), nil)
		f.trip(t, 0) // open until now + 30 s
		var r pool.Request
		a := f.choose(t, &r, pool.Need{})
		if a.Member() != 1 {
			t.Fatalf("chose m%d, want m1", a.Member())
		}
		reset := f.c.Now().Add(12 * time.Second)
		a.Headroom(f.c.Now(), pool.Headroom{Requests: pool.Limit{Remaining: 0, Reset: reset}})
		a.Failure(f.c.Now())
		got := f.p.End(f.c.Now(), &r)
		if !got.Hint.Equal(reset) {
			t.Fatalf("hint = %v, want the headroom reset %v", got.Hint, reset)
		}
	})
}
