package breaker

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDoPaths covers the paths of Do beyond its closed fast path: a success
// that must be counted (failures to zero), the probe through Do, a refusal,
// and a panicking probe (a failure that re-opens).
func TestDoPaths(t *testing.T) {
	ctx := context.Background()
	ok := func(context.Context) (int, error) { return 1, nil }
	f := newFixture(t)
	f.fail(2)
	if _, err := Do(ctx, f.b, ok); err != nil {
		t.Fatal(err)
	}
	f.want(Closed, 0, f.now(), zeroTime) // the success was counted, not skipped
	f.trip()
	tripped := f.now()
	if _, err := Do(ctx, f.b, ok); !errors.Is(err, ErrOpen) {
		t.Fatalf("Do while open: err = %v, want ErrOpen", err)
	}
	f.want(Open, 3, tripped, zeroTime)
	f.clock.Advance(testRecovery)
	if _, err := Do(ctx, f.b, ok); err != nil { // Do takes the probe and closes
		t.Fatal(err)
	}
	f.want(Closed, 0, tripped, zeroTime)
	f.wantEvents("search:open->half-open", "search:half-open->closed")
	f.trip()
	f.clock.Advance(testRecovery)
	func() {
		defer func() { _ = recover() }()
		_, _ = Do(ctx, f.b, func(context.Context) (int, error) { panic("probe panics") })
	}()
	f.want(Open, 4, f.now(), zeroTime) // the panicking probe failed and re-opened
	f.clock.Advance(time.Nanosecond)
	if _, err := Do(ctx, f.b, ok); !errors.Is(err, ErrOpen) {
		t.Fatalf("Do after the failed probe: err = %v, want ErrOpen", err)
	}
}
