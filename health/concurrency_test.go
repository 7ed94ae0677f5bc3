package health

import (
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// TestManyToolsConcurrently hammers 10,000 tools from many goroutines with
// gates, settlements and pure reads, then checks every call was recorded once.
func TestManyToolsConcurrently(t *testing.T) {
	const tools, goroutines, rounds = 10000, 8, 2
	clock := &fakeClock{}
	r, err := NewRegistry(breaker.Settings{FailureThreshold: 1000, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, tools)
	for i := range names {
		names[i] = "tool-" + strconv.Itoa(i)
	}
	rt := NewRouter(r, map[string][]string{names[0]: {names[1]}})
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for round := range rounds {
				for i := range names {
					name := names[(i+g*977)%tools]
					p, err := r.Allow(name)
					if err != nil {
						t.Error(err)
						return
					}
					clock.Advance(time.Microsecond)
					if (i+round)%3 == 0 {
						p.Done(errors.New("x"))
					} else {
						p.Done(nil)
					}
					if i%97 == 0 {
						_ = r.WouldAllow(name)
						_ = r.Status(name)
						_, _ = rt.Resolve(names[0])
					}
				}
			}
		})
	}
	wg.Go(func() {
		for range 5 {
			_ = r.Summary()
		}
	})
	wg.Wait()
	sum := r.Summary()
	if len(sum) != tools {
		t.Fatalf("%d tools, want %d", len(sum), tools)
	}
	var calls uint64
	for _, h := range sum {
		calls += h.Stats.Calls
		if h.Stats.Calls != goroutines*rounds || h.Stats.Successes+h.Stats.Failures != h.Stats.Calls {
			t.Fatalf("%s: %+v", h.Tool, h.Stats)
		}
	}
	if calls != tools*goroutines*rounds {
		t.Fatalf("%d calls recorded, want %d", calls, tools*goroutines*rounds)
	}
}

// TestConcurrentFirstUseCreatesOneBreaker races the first use of a tool.
func TestConcurrentFirstUseCreatesOneBreaker(t *testing.T) {
	for range 50 {
		r, _ := NewRegistry(breaker.Settings{})
		got := make([]*entry, 8)
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() {
				p, _ := r.Allow("new")
				got[i] = p.e
				p.Cancel()
			})
		}
		wg.Wait()
		for _, b := range got[1:] {
			if b != got[0] {
				t.Fatal("two entries for one tool")
			}
		}
	}
}
