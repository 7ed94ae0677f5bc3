// Package ctxsleep waits for a duration or until a context ends, whichever
// comes first: the one cancellable sleep of the module's retry loops. It
// imports only the standard library, like the core packages that use it.
package ctxsleep

import (
	"context"
	"time"
)

// Sleep waits for d or until ctx ends, and returns ctx.Err() in the second
// case (at once, for a d ≤ 0 and a ctx that has ended), nil in the first. Its
// timer is stopped on return, so that a cancelled sleep leaves nothing behind.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
