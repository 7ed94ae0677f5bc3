package pool_test

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// TestSlowProbe: with the member's SlowCallAfter told to the pool, a probe
// whose first content comes late re-opens its breaker when that first
// content arrives, whatever the stream does afterwards (SEMANTICS §9.2); a
// probe on time is settled with its verdict, at its end.
func TestSlowProbe(t *testing.T) {
	for _, row := range []struct {
		name      string
		first     time.Duration
		atFirst   breaker.State // the member's state right after the first content
		afterward breaker.State // after the attempt's success
	}{
		{"a late first content re-opens the breaker then", 2 * time.Second, breaker.Open, breaker.Open},
		{"a first content on time leaves the probe to its verdict", 500 * time.Millisecond, breaker.HalfOpen, breaker.Closed},
	} {
		t.Run(row.name, func(t *testing.T) {
			f := newFixture(t, equal(2), func(s *pool.Settings, bs []breaker.Settings) {
				bs[0].SlowCallAfter = time.Second
			})
			// The pool is told the member breaker's SlowCallAfter.
			members := []pool.Member{f.p.Member(0), f.p.Member(1)}
			members[0].SlowCallAfter = time.Second
			p, err := pool.New(pool.Settings{Members: members})
			if err != nil {
				t.Fatal(err)
			}
			f.trip(t, 0)
			f.c.Advance(30 * time.Second)
			var r pool.Request
			a, err := p.Choose(f.c.Now(), &r, pool.Need{Stream: true})
			if err != nil || !a.IsProbe() || a.Member() != 0 {
				t.Fatalf("Choose = m%d probe %v, %v; want m0's probe", a.Member(), a.IsProbe(), err)
			}
			a.FirstContent(f.c.Advance(row.first))
			if got := f.bs[0].State(); got != row.atFirst {
				t.Fatalf("after the first content: %v, want %v", got, row.atFirst)
			}
			a.Success(f.c.Advance(3 * time.Second))
			if got := f.bs[0].State(); got != row.afterward {
				t.Fatalf("after the stream's end: %v, want %v", got, row.afterward)
			}
			if res := p.End(f.c.Now(), &r); res.Outcome != pool.Served {
				t.Fatalf("End = %+v: a slow probe is served", res)
			}
		})
	}
}
