package agent

import (
	"context"
	"math/rand/v2"
)

// runIDKey is the context key of a run's id.
type runIDKey struct{}

// ContextWithRunID returns a copy of ctx carrying id as the run id: a Run
// given this context uses id instead of generating one (so a request id or a
// trace id can name the run in its events and logs). A blank id is ignored.
func ContextWithRunID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, runIDKey{}, id)
}

// RunIDFromContext returns the run id ctx carries. Within a run, the
// contexts Run gives to tools and providers always carry the run's id.
func RunIDFromContext(ctx context.Context) (string, bool) {
	id, ok := ctx.Value(runIDKey{}).(string)
	return id, ok && id != ""
}

// newRunID returns a fresh run id: 16 hexadecimal digits, random.
func newRunID() string {
	const hex = "0123456789abcdef"
	var b [16]byte
	v := rand.Uint64()
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = hex[v&15]
		v >>= 4
	}
	return string(b[:])
}

// attemptKey is the context key of a model attempt's turn and attempt numbers.
type attemptKey struct{}

// attemptID is the value stored under attemptKey.
type attemptID struct{ turn, attempt int }

// AttemptFromContext returns the 1-based turn and attempt numbers of the
// model attempt whose requests ctx belongs to: the contexts Run gives to
// providers carry them (the same numbers as the attempt's events), so a
// provider wrapper can match its requests to the attempt even while the
// attempt's events are still being delivered to other callbacks.
func AttemptFromContext(ctx context.Context) (turn, attempt int, ok bool) {
	id, ok := ctx.Value(attemptKey{}).(attemptID)
	return id.turn, id.attempt, ok
}
