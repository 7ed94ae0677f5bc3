package bench

// Registry benchmarks: one closed-path call (gate, then a success verdict)
// through a registry holding 1, 100 or 10,000 tools, cycling over every
// tool so that the large registries cannot stay in cache by touching one
// breaker. Tool names are built before the timer starts.
//
// loopctl's health.Registry also records per-tool statistics on every
// settlement (counts, durations, EWMA), which reads the clock at the gate and
// at the settlement. The peer is what a user of gobreaker would write: a
// map of two-step breakers under a sync.RWMutex, read-locked per call, with
// no statistics. lib=loopctl-do is health.Do (gate, call, verdict in one,
// the registry's counterpart of breaker.Do).

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
	"github.com/sony/gobreaker/v2"
)

var registrySizes = []int{1, 100, 10_000}

func toolNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = "tool-" + strconv.Itoa(i)
	}
	return names
}

func newRegistry(tb testing.TB, names []string) *health.Registry {
	tb.Helper()
	r, err := health.NewRegistry(breaker.Settings{
		FailureThreshold: threshold,
		RecoveryDuration: cooldown,
		ProbeTimeout:     cooldown,
	})
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range names {
		p, err := r.Allow(n) // the gate creates the tool; a lookup would not
		if err != nil {
			tb.Fatal(err)
		}
		p.Cancel()
		if r.Breaker(n) == nil {
			tb.Fatalf("registry: no breaker for %q", n)
		}
	}
	return r
}

// gobreakerMap is the registry a gobreaker user would write.
type gobreakerMap struct {
	mu sync.RWMutex
	m  map[string]*gobreaker.TwoStepCircuitBreaker[int]
}

func newGobreakerMap(names []string) *gobreakerMap {
	g := &gobreakerMap{m: make(map[string]*gobreaker.TwoStepCircuitBreaker[int], len(names))}
	for _, n := range names {
		s := gobreakerSettings(cooldown)
		s.Name = n
		g.m[n] = gobreaker.NewTwoStepCircuitBreaker[int](s)
	}
	return g
}

func (g *gobreakerMap) Allow(tool string) (func(error), error) {
	g.mu.RLock()
	cb := g.m[tool]
	g.mu.RUnlock()
	return cb.Allow()
}

func BenchmarkRegistry(b *testing.B) {
	for _, n := range registrySizes {
		names := toolNames(n)
		b.Run("tools="+strconv.Itoa(n)+"/lib=loopctl", func(b *testing.B) {
			r := newRegistry(b, names)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p, err := r.Allow(names[i])
				if err != nil {
					b.Fatal(err)
				}
				p.Done(nil)
				if i++; i == len(names) {
					i = 0
				}
			}
		})
		b.Run("tools="+strconv.Itoa(n)+"/lib=loopctl-do", func(b *testing.B) {
			r := newRegistry(b, names)
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				v, err := health.Do(ctx, r, names[i], okCtx)
				if err != nil {
					b.Fatal(err)
				}
				sink = v
				if i++; i == len(names) {
					i = 0
				}
			}
		})
		b.Run("tools="+strconv.Itoa(n)+"/lib=gobreaker-map", func(b *testing.B) {
			g := newGobreakerMap(names)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				done, err := g.Allow(names[i])
				if err != nil {
					b.Fatal(err)
				}
				done(nil)
				if i++; i == len(names) {
					i = 0
				}
			}
		})
	}
}

func BenchmarkRegistryParallel(b *testing.B) {
	for _, n := range registrySizes {
		names := toolNames(n)
		// Each goroutine starts at its own offset in the tool list.
		var start atomic.Int64
		offset := func() int { return int(start.Add(7919)) % len(names) }
		b.Run("tools="+strconv.Itoa(n)+"/lib=loopctl", func(b *testing.B) {
			r := newRegistry(b, names)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := offset()
				for pb.Next() {
					p, err := r.Allow(names[i])
					if err != nil {
						b.Error(err)
						return
					}
					p.Done(nil)
					if i++; i == len(names) {
						i = 0
					}
				}
			})
		})
		b.Run("tools="+strconv.Itoa(n)+"/lib=gobreaker-map", func(b *testing.B) {
			g := newGobreakerMap(names)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := offset()
				for pb.Next() {
					done, err := g.Allow(names[i])
					if err != nil {
						b.Error(err)
						return
					}
					done(nil)
					if i++; i == len(names) {
						i = 0
					}
				}
			})
		})
	}
}
