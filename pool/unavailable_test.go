package pool_test

import (
	"errors"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

// TestUnavailableTable: when no member is admitted, the pool says when one
// may be admitted again and whether every member is out for the providers'
// say (a hint, a quota, headroom: a gateway answers 429) or not (503).
func TestUnavailableTable(t *testing.T) {
	rows := []struct {
		name    string
		out     []string // how each of the two members is put out
		retryAt time.Duration
		limited bool
	}{
		{"both rate limited with hints: the earlier hint, limited", []string{"hint 3s", "hint 5s"}, 3 * time.Second, true},
		{"a quota and a hint: limited", []string{"quota", "hint 2s"}, 2 * time.Second, true},
		{"a quota with no hint: its QuotaCooldown", []string{"quota", "quota"}, 10 * time.Minute, true},
		{"headroom and a hint: limited", []string{"headroom 4s", "hint 6s"}, 4 * time.Second, true},
		{"a tripped member among them: not limited", []string{"trip", "hint 2s"}, 2 * time.Second, false},
		{"both tripped: the cooldown's end, not limited", []string{"trip", "trip"}, 30 * time.Second, false},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := newFixture(t, equal(2), nil)
			now := f.c.Now()
			for i, how := range row.out {
				var r pool.Request
				if how == "trip" {
					f.trip(t, i)
					continue
				}
				a := f.choose(t, &r, pool.Need{CanServe: only(i)})
				var d time.Duration
				switch {
				case how == "quota":
					a.QuotaExhausted(now, time.Time{})
				case how[:4] == "hint":
					d, _ = time.ParseDuration(how[5:])
					a.RateLimited(now, now.Add(d))
				default: // headroom
					d, _ = time.ParseDuration(how[9:])
					a.Headroom(now, pool.Headroom{Requests: pool.Limit{Remaining: 0, Reset: now.Add(d)}})
					a.Success(now)
				}
			}
			var r pool.Request
			_, err := f.p.Choose(now, &r, pool.Need{})
			var ue *pool.UnavailableError
			if !errors.As(err, &ue) {
				t.Fatalf("Choose: %v, want an *UnavailableError", err)
			}
			if !ue.RetryAt.Equal(now.Add(row.retryAt)) || ue.Limited != row.limited {
				t.Fatalf("RetryAt +%v limited %v, want +%v %v", ue.RetryAt.Sub(now), ue.Limited, row.retryAt, row.limited)
			}
			if f.p.Admits(now, &r, pool.Need{}) {
				t.Fatal("Admits = true")
			}
			if u := f.p.Unavailable(now, &r, pool.Need{}); *u != *ue {
				t.Fatalf("Unavailable = %+v, want %+v", u, ue)
			}
		})
	}
}

// TestRateLimitedHint: a member rate limited with a hint is out until the
// hint exactly, not for its breaker's cooldown; then admitted again.
func TestRateLimitedHint(t *testing.T) {
	f := newFixture(t, equal(2), nil)
	var r pool.Request
	a := f.choose(t, &r, pool.Need{CanServe: only(0)})
	a.RateLimited(f.c.Now(), f.c.Now().Add(time.Second))
	if f.p.Admits(f.c.Now().Add(999*time.Millisecond), &pool.Request{}, pool.Need{CanServe: only(0)}) {
		t.Fatal("admitted before the hint")
	}
	f.c.Advance(time.Second)
	if !f.p.Admits(f.c.Now(), &pool.Request{}, pool.Need{CanServe: only(0)}) {
		t.Fatal("not admitted at the hint")
	}
	if s := f.bs[0].Snapshot(); s.Trips != 0 {
		t.Fatalf("trips = %d, want 0: a hint's opening is no trip", s.Trips)
	}
}
