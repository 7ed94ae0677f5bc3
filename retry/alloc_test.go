//go:build !race

package retry

import (
	"context"
	"testing"
)

// TestDoFirstTrySuccessAllocs pins the zero-allocation fast path (the race
// detector changes allocation counts, hence the build tag).
func TestDoFirstTrySuccessAllocs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	p := Policy{OnRetry: func(Attempt) {}}
	allocs := testing.AllocsPerRun(1000, func() {
		_, _ = Do(ctx, p, func(context.Context) (int, error) { n++; return n, nil })
	})
	if allocs != 0 {
		t.Errorf("Do allocated %v times on a first-try success, want 0", allocs)
	}
}
