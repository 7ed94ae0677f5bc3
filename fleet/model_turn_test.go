package fleet

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestManagerNextThroughBackend: the rev-3 turn memory works through the
// Backend seam: one probe per turn for the whole fleet, routing past a slow
// primary (the entry's verdict counts nothing in Primary), hedge tickets, and
// a quota failure holding the shared cooldown until its hint.
func TestManagerNextThroughBackend(t *testing.T) {
	srv := redistest.Start(t)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000)
	var ms []*fallback.Manager
	for range 2 {
		s := newFakeStore(t, srv, Options{}, clock.Load)
		m, err := fallback.New(fallback.Settings{Primary: "a", Chain: []string{"b", "c"}, TripThreshold: 2,
			RecoveryTimeout: time.Second, MaxFailCount: 1, HedgeAfter: time.Second, Backend: s.ModelBackend("r3")})
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	// In Primary: a slow primary sends the turn to b, whose failure counts nothing.
	var u fallback.Attempts
	tk, _ := ms[0].Next(&u)
	tk.Fail(fallback.Failure{Kind: fallback.RateLimit})
	if !u.Usable(ms[0]) {
		t.Fatal("Usable = false with b and c left")
	}
	tb, err := ms[0].Next(&u)
	if err != nil || tb.Model() != "b" {
		t.Fatalf("Next after a slow primary = %q, %v", tb.Model(), err)
	}
	hd, ok := ms[0].Hedge(&u, tb)
	if !ok || hd.Model() != "c" {
		t.Fatalf("Hedge = %q, %v", hd.Model(), ok)
	}
	hd.Cancel()
	tb.Failure(fallback.Transient)
	eventually(t, time.Second, "the primary's failure reaches p1", func() bool { return ms[1].Snapshot().ConsecutiveFailures == 1 })
	if s := ms[1].Snapshot(); s.Chain[0].Attempts != 0 {
		t.Fatalf("entry b counted a turn served in Primary: %+v", s.Chain)
	}
	// A quota failure trips at once; the cooldown ends at its hint.
	tk, _ = ms[1].Begin()
	hint := time.UnixMicro(clock.Load()).Add(3 * time.Second)
	tk.Fail(fallback.Failure{Kind: fallback.Quota, Hint: hint})
	eventually(t, time.Second, "quota trip everywhere", func() bool { return ms[0].State() == fallback.Fallback })
	if s := ms[0].Snapshot(); !s.CooldownEnds.Equal(hint) || s.CooldownCause != fallback.CauseQuota {
		t.Fatalf("snapshot %+v, want the cooldown to the hint", s)
	}
	clock.Add(3_000_000)
	// One probe per turn: the turn whose probe failed goes to the chain, then
	// is refused; another process's turn gets the free slot.
	var p fallback.Attempts
	pt, err := ms[0].Next(&p)
	if err != nil || !pt.IsProbe() {
		t.Fatalf("Next = %q probe %v, %v", pt.Model(), pt.IsProbe(), err)
	}
	pt.Fail(fallback.Failure{Timeout: true})
	tb, err = ms[0].Next(&p)
	if err != nil || tb.Model() != "b" || tb.IsProbe() {
		t.Fatalf("second Next = %q probe %v, %v", tb.Model(), tb.IsProbe(), err)
	}
	tb.Failure(fallback.Transient)
	tc, _ := ms[0].Next(&p)
	tc.Failure(fallback.Transient) // c spent too
	_, err = ms[0].Next(&p)
	var e *fallback.ExhaustedError
	if !errors.As(err, &e) || !e.Probed || !e.ProbeFailure.Timeout || e.RetryIn != 0 {
		t.Fatalf("third Next = %v", err)
	}
	if tk, err := ms[1].Begin(); err != nil || !tk.IsProbe() {
		t.Fatalf("the other process's Begin = %q probe %v, %v", tk.Model(), tk.IsProbe(), err)
	}
}
