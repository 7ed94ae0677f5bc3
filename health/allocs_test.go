package health

import (
	"context"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
)

// TestHotPathsDoNotAllocate checks the allocation goals for known tools (their
// speed is measured by the benchmarks).
func TestHotPathsDoNotAllocate(t *testing.T) {
	r, _ := NewRegistry(breaker.Settings{})
	rt := NewRouter(r, map[string][]string{"a": {"b"}})
	create(r, "a", "b")
	ok := func(context.Context) (int, error) { return 1, nil }
	for name, fn := range map[string]func(){
		"Allow+Success": func() { p, _ := r.Allow("a"); p.Success() },
		"Do":            func() { _, _ = Do(context.Background(), r, "a", ok) },
		"WouldAllow":    func() { _ = r.WouldAllow("a") },
		"Status":        func() { _ = r.Status("a") },
		"Resolve":       func() { _, _ = rt.Resolve("a") },
	} {
		if n := testing.AllocsPerRun(1000, fn); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
}
