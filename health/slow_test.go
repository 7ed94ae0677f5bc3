package health

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// TestSlowCallsThroughTheRegistry (SEMANTICS §8.2): a registry permit reports
// a call's time to first content to its breaker (SuccessAfter, DoneAfter, and
// Do, where fn's whole answer is its first content), so that the slow-call
// rule trips the tool's breaker; Success and Done(nil) are never slow. The
// Stats record every one as a success.
func TestSlowCallsThroughTheRegistry(t *testing.T) {
	slow := func(f *fixture) {
		f.clock.Advance(3 * time.Second)
	}
	for _, tc := range []struct {
		name  string
		call  func(f *fixture, p Permit)
		trips bool
	}{
		{"SuccessAfter above SlowCallAfter", func(_ *fixture, p Permit) { p.SuccessAfter(2 * time.Second) }, true},
		{"SuccessAfter below SlowCallAfter", func(f *fixture, p Permit) { slow(f); p.SuccessAfter(time.Second) }, false},
		{"DoneAfter(nil) above SlowCallAfter", func(_ *fixture, p Permit) { p.DoneAfter(nil, 2*time.Second) }, true},
		{"Success is never slow", func(f *fixture, p Permit) { slow(f); p.Success() }, false},
		{"Done(nil) is never slow", func(f *fixture, p Permit) { slow(f); p.Done(nil) }, false},
		{"Do: a 3 s answer is slow", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fixture{clock: &fakeClock{}}
			r, err := NewRegistry(breaker.Settings{SlowCallAfter: 1500 * time.Millisecond, SlowCallRate: 0.5,
				RateMinCalls: 2, Now: f.clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			f.r = r
			for range 2 {
				if tc.call == nil {
					_, err := Do(context.Background(), r, "a", func(context.Context) (int, error) { slow(f); return 1, nil })
					if err != nil {
						t.Fatal(err)
					}
					continue
				}
				p, err := r.Allow("a")
				if err != nil {
					t.Fatal(err)
				}
				tc.call(f, p)
			}
			if st := r.Breaker("a").State(); (st == breaker.Open) != tc.trips {
				t.Fatalf("state %v, want tripped %v", st, tc.trips)
			}
			if s := r.Stats("a"); s.Calls != 2 || s.Successes != 2 {
				t.Fatalf("stats %+v, want 2 successes", s)
			}
		})
	}
}

// TestDoneAfterErrors: DoneAfter settles an error as Done does.
func TestDoneAfterErrors(t *testing.T) {
	f := newFixture(t) // FailureThreshold 2
	for range 2 {
		p, _ := f.r.Allow("a")
		p.DoneAfter(errors.New("boom"), time.Second)
	}
	p, _ := f.r.Allow("b")
	p.DoneAfter(context.Canceled, time.Second)
	if f.r.Breaker("a").State() != breaker.Open || f.r.Stats("b").Calls != 0 {
		t.Fatalf("a %v, b's stats %+v: want a open and b's cancel recorded nowhere", f.r.Breaker("a").State(), f.r.Stats("b"))
	}
}
