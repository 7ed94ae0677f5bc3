package pool_test

import (
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

// TestChoiceDoesNotAllocate checks the choice's allocation goal (SEMANTICS
// §9.3: its choice allocates nothing; the speed is the benchmarks'): each
// path of rule 3 with its settlement, the Request on the caller's stack, as
// a caller keeps it. A pointer stored through an internal *Attempt would
// move the Request to the heap.
func TestChoiceDoesNotAllocate(t *testing.T) {
	f := newFixture(t, equal(8), nil)
	now := f.c.Now()
	weighted := newFixture(t, []float64{1, 2, 3, 4, 5, 6, 7, 8}, nil)
	probing := newFixture(t, equal(8), nil)
	probing.trip(t, 2)
	later := probing.c.Advance(time.Minute)
	limited := newFixture(t, equal(8), nil)
	ample := pool.Limit{Remaining: 1 << 50, Reset: now.Add(time.Hour)}
	for i := range 8 {
		var r pool.Request
		a, err := limited.p.Pin(now, &r, i, pool.Need{})
		if err != nil {
			t.Fatal(err)
		}
		a.Headroom(now, pool.Headroom{Requests: ample, Tokens: ample})
		a.Success(now)
	}
	s := pool.SessionOf("conversation-1")
	long := strings.Repeat("k", 128)
	choose := func(p *pool.Pool, at time.Time, n pool.Need) func() {
		return func() {
			var r pool.Request
			a, err := p.Choose(at, &r, n)
			if err != nil {
				t.Fatal(err)
			}
			a.FirstContent(at)
			a.Success(at)
			_ = p.End(at, &r)
		}
	}
	for name, fn := range map[string]func(){
		"power of two":      choose(f.p, now, pool.Need{Stream: true}),
		"session":           choose(f.p, now, pool.Need{Session: s}),
		"weighted session":  choose(weighted.p, now, pool.Need{Session: s}),
		"headroom":          choose(limited.p, now, pool.Need{Tokens: 100}),
		"due probe, cancel": func() { var r pool.Request; a, _ := probing.p.Choose(later, &r, pool.Need{}); a.Cancel(later) },
		"hedge and lose": func() {
			var r pool.Request
			a, _ := f.p.Choose(now, &r, pool.Need{Session: s})
			h, _ := f.p.Hedge(now, &r, pool.Need{Session: s})
			h.FirstContent(now)
			a.Lose(now, time.Second)
			h.Success(now)
		},
		"pin":                     func() { var r pool.Request; a, _ := f.p.Pin(now, &r, 3, pool.Need{}); a.NoVerdict(now) },
		"peek":                    func() { var r pool.Request; _ = f.p.Peek(now, &r, pool.Need{Session: s}) },
		"admits":                  func() { var r pool.Request; _ = f.p.Admits(now, &r, pool.Need{}) },
		"session key (UUID)":      func() { _ = pool.SessionOf("0198c3b2-7d4e-7a11-9f3c-2b5e8d1a6c40") },
		"session key (128 bytes)": func() { _ = pool.SessionOf(long) },
	} {
		if n := testing.AllocsPerRun(1000, fn); n != 0 {
			t.Errorf("%s: %v allocations per choice", name, n)
		}
	}
}
