package health

import (
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
)

// benchRegistry returns a registry with n known tools and their names.
func benchRegistry(b *testing.B, n int) (*Registry, []string) {
	r, err := NewRegistry(breaker.Settings{})
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, n)
	for i := range names {
		names[i] = "tool-" + strconv.Itoa(i)
		create(r, names[i])
	}
	return r, names
}

func BenchmarkRegistryAllowSettle(b *testing.B) {
	r, names := benchRegistry(b, 1000)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			p, err := r.Allow(names[i%len(names)])
			if err != nil {
				b.Fatal(err)
			}
			p.Success()
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			i := int(next.Add(337))
			for pb.Next() {
				p, _ := r.Allow(names[i%len(names)])
				p.Success()
				i++
			}
		})
	})
}

func BenchmarkRegistryWouldAllow(b *testing.B) {
	r, names := benchRegistry(b, 1000)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_ = r.WouldAllow(names[i%len(names)])
		i++
	}
}

func BenchmarkRouterResolve(b *testing.B) {
	r, names := benchRegistry(b, 1000)
	rt := NewRouter(r, map[string][]string{names[0]: {names[1], names[2]}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rt.Resolve(names[0]); err != nil {
			b.Fatal(err)
		}
	}
}
