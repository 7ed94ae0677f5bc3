package agent

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
)

// runTools runs the calls of one turn concurrently and returns their results
// in the model's order. It returns only when every call has returned.
func (a *Agent) runTools(ctx context.Context, runID string, n int, calls []ToolCall) []Message {
	out := make([]Message, len(calls))
	if len(calls) == 1 {
		out[0] = a.callTool(ctx, runID, n, calls[0])
		return out
	}
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() { out[i] = a.callTool(ctx, runID, n, calls[i]) })
	}
	wg.Wait()
	return out
}

// callTool runs one tool call through the router, the tool breaker's gate and
// the tool itself, settles the permit and returns the tool result message.
func (a *Agent) callTool(ctx context.Context, runID string, n int, call ToolCall) Message {
	ev := Event{Kind: EventToolCall, RunID: runID, Turn: n, CallID: call.ID, Tool: call.Name, Arguments: call.Arguments}
	start := time.Now()
	content := a.dispatch(ctx, call, &ev)
	ev.Duration = time.Since(start)
	a.emit(ctx, ev)
	return Message{Role: RoleTool, Content: content, ToolCallID: call.ID, ToolName: call.Name,
		IsError: ev.Outcome != OutcomeOK}
}

// dispatch fills in ev's resolved tool, outcome, soft error text and error,
// and returns the content of the tool result message: the tool's output or
// the soft error text.
func (a *Agent) dispatch(ctx context.Context, call ToolCall, ev *Event) (content string) {
	defer func() {
		if ev.Outcome != OutcomeOK {
			content = ev.Text
		}
	}()
	soft := func(o Outcome, text string, err error) {
		ev.Outcome, ev.Text, ev.Err = o, text, err
	}
	if err := ctx.Err(); err != nil {
		soft(OutcomeCancelled, fmt.Sprintf("tool '%s' was cancelled", call.Name), err)
		return
	}
	if _, ok := a.byName[call.Name]; !ok {
		soft(OutcomeUnknown, a.unknownText(call.Name), nil)
		return
	}
	args, err := objectArgs(call.Arguments)
	if err != nil {
		err = &ArgumentError{Tool: call.Name, Err: err}
		soft(OutcomeBadArguments, err.Error(), err)
		return
	}

	// Router (pure reads), then the bound call (decoding touches no breaker),
	// then the gate on the resolved name.
	name, err := a.router.Resolve(call.Name)
	if err != nil {
		soft(OutcomeRefused, a.refusalText(call.Name, call.Name, err), err)
		return
	}
	r := a.invoke(ctx, call.Name, name, args)
	if r.probeFailed && !a.byName[name].NotIdempotent {
		// The probe failed and its breaker is open again: resolve the call
		// once more, and if another candidate takes it, the model reads that.
		if next, err := a.router.Resolve(call.Name); err == nil && next != name {
			if r2 := a.invoke(ctx, call.Name, next, args); r2.gated {
				ev.FallThrough, r = name, r2
			}
		}
	}
	ev.ResolvedTool = r.tool
	ev.Outcome, ev.Text, ev.Err = r.outcome, r.text, r.err
	return r.out
}

// invocation is how one candidate's call went.
type invocation struct {
	tool        string  // the candidate
	out         string  // its output (OutcomeOK)
	outcome     Outcome // how it ended
	text        string  // the soft error text, unless OutcomeOK
	err         error   // the underlying error
	gated       bool    // the gate granted a permit: the call ran
	probeFailed bool    // the permit was the probe and was settled as a failure
}

// invoke binds the arguments for tool (the candidate the router picked for
// the call to requested), takes its breaker's gate, runs it and settles the
// permit.
func (a *Agent) invoke(ctx context.Context, requested, name string, args []byte) (r invocation) {
	r.tool = name
	soft := func(o Outcome, text string, err error) {
		r.outcome, r.text, r.err = o, text, err
	}
	tool := a.byName[name]
	run, err := tool.bound(args)
	if err != nil {
		soft(OutcomeBadArguments, err.Error(), err)
		return r
	}
	permit, err := a.tools.Allow(name)
	if err != nil {
		soft(OutcomeRefused, a.refusalText(requested, name, err), err)
		return r
	}
	r.gated = true
	settled := false
	defer func() {
		if !settled { // runtime.Goexit in the tool: leave no probe slot held
			permit.Cancel()
		}
	}()

	// A probe never outlives its lease (SEMANTICS 1): it runs under the
	// earlier of the tool's timeout and the lease left on the breakers' clock.
	limit := tool.Timeout
	if end, ok := permit.Deadline(); ok {
		limit = min(limit, end.Sub(a.toolNow()))
	}
	began := time.Now()
	out, err, timedOut := a.execute(ctx, tool, limit, run)
	took := time.Since(began)
	settled = true
	r.settle(ctx, permit, ran{out: out, err: err, timedOut: timedOut, limit: limit, took: took,
		elapsed: took.Round(time.Millisecond)})
	return r
}

// ran is how a tool's call returned: its output and error, whether it failed
// after its limit (its timeout or a probe's lease) passed, that limit, and
// how long it ran (took; elapsed rounded to the millisecond for texts).
type ran struct {
	out      string
	err      error
	timedOut bool
	limit    time.Duration
	took     time.Duration
	elapsed  time.Duration
}

// settle gives permit the verdict of how r's tool ran (SEMANTICS 1): success,
// no verdict (the caller gave up, or the model's arguments were bad), or a
// failure (a timeout, a panic, an error); and records the outcome in r.
func (r *invocation) settle(ctx context.Context, permit health.Permit, res ran) {
	name, err := r.tool, res.err
	soft := func(o Outcome, text string, err error) {
		r.outcome, r.text, r.err = o, text, err
	}
	failure := func(o Outcome, text string) {
		if o == OutcomeTimeout {
			permit.Timeout() // no answer until its deadline: dated at its start (SEMANTICS 1)
		} else {
			permit.Failure()
		}
		r.probeFailed = permit.IsProbe() && ctx.Err() == nil
		soft(o, text, err)
	}
	var perr *PanicError
	var aerr *ArgumentError
	var uerr *UnavailableError
	switch {
	case err == nil:
		permit.SuccessAfter(res.took) // a tool's whole answer is its first content (SEMANTICS §8.2)
		r.outcome, r.out = OutcomeOK, res.out
	case errors.Is(ctx.Err(), context.Canceled):
		permit.Cancel() // the caller gave up: no verdict
		soft(OutcomeCancelled, fmt.Sprintf("tool '%s' was cancelled", name), err)
	case ctx.Err() != nil: // the caller's deadline passed while the tool ran: a failure
		failure(OutcomeTimeout, fmt.Sprintf("tool '%s' timed out after %v", name, res.elapsed))
	case errors.As(err, &perr):
		failure(OutcomePanic, perr.Error())
	case res.timedOut:
		failure(OutcomeTimeout, fmt.Sprintf("tool '%s' timed out after %v", name, res.limit.Round(time.Millisecond)))
	case errors.As(err, &aerr):
		permit.Cancel() // the model's mistake, not the tool's
		soft(OutcomeBadArguments, err.Error(), err)
	case errors.As(err, &uerr):
		permit.Cancel() // its server is down: not the tool's failure
		soft(OutcomeUnavailable, err.Error(), err)
	default:
		failure(OutcomeError, err.Error())
	}
}

// execute runs the tool under limit (its timeout, or a probe's lease),
// turning a panic into a *PanicError. timedOut reports that the tool failed
// after that limit passed.
func (a *Agent) execute(ctx context.Context, tool *Tool, limit time.Duration, run func(context.Context) (string, error)) (out string, err error, timedOut bool) {
	tctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	defer func() {
		if r := recover(); r != nil {
			out, err = "", &PanicError{Tool: tool.Name, Value: r, Stack: debug.Stack()}
		}
	}()
	out, err = run(tctx)
	if err != nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		timedOut = true
	}
	return out, err, timedOut
}

// unknownText is the soft error for a tool that does not exist.
func (a *Agent) unknownText(name string) string {
	if a.toolNames == "" {
		return fmt.Sprintf("tool '%s' is not available; no tools are available", name)
	}
	return fmt.Sprintf("tool '%s' is not available; available tools: %s", name, a.toolNames)
}

// refusalText is the soft error for a refused call: it starts with the
// breaker's refusal text and says when to retry and which backups exist.
// requested is the tool the model asked for, refused the one that was refused.
func (a *Agent) refusalText(requested, refused string, err error) string {
	var b strings.Builder
	b.WriteString("tool temporarily unavailable: circuit breaker open for tool '")
	b.WriteString(refused)
	b.WriteString("'; retry in ")
	b.WriteString(a.retryIn(refused, err).String())
	backups := a.backups[requested]
	if len(backups) == 0 {
		b.WriteString("; no backup tool")
		return b.String()
	}
	b.WriteString("; backup tools: ")
	for i, name := range backups {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(name)
		if a.tools.WouldAllow(name) {
			b.WriteString(" (available)")
		} else {
			b.WriteString(" (unavailable)")
		}
	}
	return b.String()
}

// retryIn tells when the refused tool may be tried again, rounded up as the
// breakers' own refusal texts are ([breaker.RoundRetry]: sub-second precision
// below 10s): the breaker's own RetryIn if err carries one, else the soonest
// moment any candidate (the tool or a backup) may grant a probe, from pure
// reads.
func (a *Agent) retryIn(refused string, err error) time.Duration {
	var d time.Duration
	if oe, ok := errors.AsType[*breaker.OpenError](err); ok {
		d = oe.RetryIn
	} else {
		d = -1
		for _, name := range append([]string{refused}, a.backups[refused]...) {
			if w := a.waitFor(name); d < 0 || w < d {
				d = w
			}
		}
	}
	return breaker.RoundRetry(max(d, 0))
}

// waitFor tells, from a pure read, how long until tool's breaker may grant a call.
func (a *Agent) waitFor(tool string) time.Duration {
	return a.tools.Breaker(tool).RetryIn()
}
