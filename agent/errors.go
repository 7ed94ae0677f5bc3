package agent

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel reasons a run ends with a hard error. A [*RunError] satisfies
// errors.Is with exactly one of them, or with [fallback.ErrExhausted].
var (
	// ErrTurnFailed: a turn failed on every attempt it was allowed (the
	// Config.TurnAttempts budget was spent, or the model breaker routed the turn
	// back to a model that had just answered with a permanent error). The
	// RunError also wraps the last error.
	ErrTurnFailed = errors.New("agent: turn failed")

	// ErrCanceled: the caller cancelled the run (its context is done). The
	// RunError also wraps ctx.Err().
	ErrCanceled = errors.New("agent: run cancelled")

	// ErrMaxTurns: the model was still asking for tools after Config.MaxTurns
	// turns.
	ErrMaxTurns = errors.New("agent: turn limit reached")
)

// RunError is the hard error that ends a run.
//
// errors.Is(err, Reason) and errors.Is(err, Err) both hold: for example a
// cancelled run satisfies both errors.Is(err, ErrCanceled) and
// errors.Is(err, context.Canceled), and an exhausted chain satisfies
// errors.Is(err, fallback.ErrExhausted).
type RunError struct {
	Turn   int    // the 1-based turn the run ended in
	Model  string // the last model tried in that turn ("" if none)
	Reason error  // ErrTurnFailed, ErrCanceled, ErrMaxTurns or fallback.ErrExhausted (possibly wrapped)
	Err    error  // the underlying error: the last provider error or ctx.Err(); may be nil
}

// Error describes the reason, the turn and the underlying error.
func (e *RunError) Error() string {
	var b strings.Builder
	b.WriteString(e.Reason.Error())
	fmt.Fprintf(&b, " (turn %d", e.Turn)
	if e.Model != "" {
		fmt.Fprintf(&b, ", model %s", e.Model)
	}
	b.WriteString(")")
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns Reason and, if set, Err.
func (e *RunError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Reason}
	}
	return []error{e.Reason, e.Err}
}

// ArgumentError reports tool arguments that could not be decoded. It is the
// model's mistake, not the tool's: the loop turns it into a soft error and
// leaves the tool breaker untouched. Tools built with [NewTool] return it for
// bad arguments; a hand-written [Tool.Func] may return one too (wrapped or not).
type ArgumentError struct {
	Tool string
	Err  error
}

// Error returns "invalid arguments for tool 'x': ...".
func (e *ArgumentError) Error() string {
	return fmt.Sprintf("invalid arguments for tool '%s': %v", e.Tool, e.Err)
}

// Unwrap returns Err.
func (e *ArgumentError) Unwrap() error { return e.Err }

// UnavailableError reports that what serves a tool could not be reached for
// a reason that is not the tool's own (an MCP server that crashed and is
// restarting): the loop turns it into a soft error the model reads and
// leaves the tool breaker untouched, so that a server's restart does not
// trip its healthy tools. A [Tool.Func] returns one (wrapped or not); the
// call's event has [OutcomeUnavailable].
type UnavailableError struct {
	Tool string
	Err  error
}

// Error returns "tool 'x' is unavailable: ...".
func (e *UnavailableError) Error() string {
	return fmt.Sprintf("tool '%s' is unavailable: %v", e.Tool, e.Err)
}

// Unwrap returns Err.
func (e *UnavailableError) Unwrap() error { return e.Err }

// PanicError is the error of an [EventToolCall] whose tool panicked.
type PanicError struct {
	Tool  string // the tool that ran (the resolved name)
	Value any    // the value passed to panic
	Stack []byte // the goroutine's stack at the panic
}

// Error returns "tool 'x' panicked: <value>", the text the model reads.
func (e *PanicError) Error() string {
	return fmt.Sprintf("tool '%s' panicked: %v", e.Tool, e.Value)
}
