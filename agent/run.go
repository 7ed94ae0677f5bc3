package agent

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

// Result is what a run produced. Run returns it even when the run ends with an
// error, holding everything up to that point.
type Result struct {
	// Messages is the full conversation: the messages given to Run, then every
	// assistant message and tool result, in order. After a cancellation during
	// tool calls it ends with their (cancelled) results, so it can be resumed.
	Messages []Message
	// Answer is the text of the final assistant message (one without tool
	// calls); "" if the run ended with an error.
	Answer string
	// Turns is the number of turns taken (turns that reached the model breaker).
	Turns int
	// Attempts records every model attempt, in order: a turn that failed over to
	// another model has several.
	Attempts []TurnRecord
	// Usage sums the token usage of every successful response.
	Usage Usage
	// StopReason is the stop reason of the last response the run received. A
	// run that ends with an answer cut at the token limit returns that answer
	// and a nil error, with StopReason == StopLength: check it when a
	// complete answer matters (the Logger reports it at Warn, "agent: answer
	// cut at the token limit").
	StopReason StopReason
	// RunID names the run in its events and logs: the id ctx carried (see
	// [ContextWithRunID]), else a fresh random one.
	RunID string
}

// TurnRecord describes one model attempt of a turn.
type TurnRecord struct {
	Turn     int           // 1-based turn number
	Attempt  int           // 1-based attempt within the turn
	Model    string        // the model the model breaker routed the attempt to
	Probe    bool          // the attempt was the model breaker's recovery probe
	Requests int           // requests the retry ladder sent
	Duration time.Duration // from the gate to the verdict
	Err      error         // nil on success
	Usage    Usage         // the response's usage (zero on failure)

	// FailedOver: the attempt ended at once on a rate limit or a timeout,
	// without waiting or retrying on this model, because another model was
	// usable (SEMANTICS 7.1); the turn's next attempt went there.
	FailedOver bool

	StopReason StopReason // the response's stop reason ("" on failure)
}

// Run runs the agent loop on msgs until the model answers without asking for
// tools, and returns the conversation and the answer.
//
// Each turn goes through the model breaker, the retry ladder and the routed
// model's Provider; the tools the model asks for run concurrently and their
// results are appended in the model's order. Soft errors go back to the model;
// a hard error ends the run as a [*RunError] (see ErrTurnFailed, ErrCanceled,
// ErrMaxTurns and fallback.ErrExhausted). The returned Result is never nil.
//
// Cancelling ctx stops the run promptly: the provider and the tools get ctx,
// open turn tickets and tool permits are settled as cancelled (neither breaker
// counts it), and Run returns an error satisfying errors.Is(err, ErrCanceled)
// and errors.Is(err, ctx.Err()). A ctx deadline ends the run the same way, but
// a model request or tool call that was still hanging when it passed counts as
// a failure: a call that hangs until the caller's deadline is exactly what the
// breakers exist for. Run does not return before every tool call it
// started has returned: tools must honour their context.
//
// A turn whose request the provider rejects as malformed (HTTP 400, 413 or
// 422: a prompt too long for the model, say) ends the run with ErrTurnFailed
// at once, and the error's text carries the provider's message and code; it
// carries no verdict against the model, whose breaker is left as it was.
//
// The run's id (Result.RunID, Event.RunID) is the one ctx carries
// ([ContextWithRunID]), else a fresh one; the contexts given to tools and
// providers carry it ([RunIDFromContext]).
func (a *Agent) Run(ctx context.Context, msgs []Message) (*Result, error) {
	res := &Result{Messages: slices.Clone(msgs)}
	if id, ok := RunIDFromContext(ctx); ok {
		res.RunID = id
	} else {
		res.RunID = newRunID()
		ctx = ContextWithRunID(ctx, res.RunID)
	}
	for n := 1; ; n++ {
		if n > a.maxTurns {
			return res, &RunError{Turn: n - 1, Reason: ErrMaxTurns}
		}
		if err := ctx.Err(); err != nil {
			return res, &RunError{Turn: n, Reason: ErrCanceled, Err: err}
		}
		res.Turns = n
		msg, err := a.turn(ctx, n, res)
		if err != nil {
			return res, err
		}
		res.Messages = append(res.Messages, msg)
		res.StopReason = res.Attempts[len(res.Attempts)-1].StopReason
		if len(msg.ToolCalls) == 0 {
			res.Answer = msg.Content
			return res, nil
		}
		res.Messages = append(res.Messages, a.runTools(ctx, res.RunID, n, msg.ToolCalls)...)
		if err := ctx.Err(); err != nil {
			return res, &RunError{Turn: n, Reason: ErrCanceled, Err: err}
		}
	}
}

// turn sends one turn to the model breaker's routed model, failing over to
// whatever it routes to next, up to the attempt budget. The turn's attempts
// share one fallback.Attempts (SEMANTICS 7): one probe per turn, and
// the models that failed the turn slowly (a timeout, a rate limit) are routed
// past, so the turn moves on at once.
func (a *Agent) turn(ctx context.Context, n int, res *Result) (Message, error) {
	req := Request{
		Messages:  res.Messages[:len(res.Messages):len(res.Messages)], // a provider's append cannot clobber ours
		Tools:     a.specs,
		MaxTokens: a.maxTokens,
	}
	var (
		lastErr   error
		lastModel string
		permanent []string // models that answered this turn with a permanent error
		turn      fallback.Attempts
		slow      []string // models that failed this turn slowly
	)
	for attempt := 1; attempt <= a.turnAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return Message{}, &RunError{Turn: n, Model: lastModel, Reason: ErrCanceled, Err: err}
		}
		ticket, err := a.models.Next(&turn)
		if err != nil { // fallback.ErrExhausted: no request is sent
			a.emit(ctx, Event{Kind: EventTurnRefused, RunID: res.RunID, Turn: n, Attempt: attempt, Model: lastModel, Err: err})
			return Message{}, &RunError{Turn: n, Model: lastModel, Reason: err, Err: lastErr}
		}
		model := ticket.Model()
		if slices.Contains(permanent, model) {
			// Never repeat a permanent error on the same model within a turn.
			ticket.Cancel()
			return Message{}, &RunError{Turn: n, Model: model, Reason: ErrTurnFailed, Err: lastErr}
		}
		failover := attempt < a.turnAttempts && a.otherUsable(model, slow)
		rec, msg, err := a.attempt(ctx, res.RunID, n, attempt, ticket, req, failover)
		res.Attempts = append(res.Attempts, rec)
		if err == nil {
			res.Usage.InputTokens += rec.Usage.InputTokens
			res.Usage.OutputTokens += rec.Usage.OutputTokens
			return msg, nil
		}
		end, isSlow, isPermanent := judgeFailure(ctx, n, model, err, failover)
		if end != nil {
			return Message{}, end
		}
		lastErr, lastModel = err, model
		if isSlow {
			slow = append(slow, model)
		}
		if isPermanent {
			permanent = append(permanent, model)
		}
	}
	return Message{}, &RunError{Turn: n, Model: lastModel, Reason: ErrTurnFailed, Err: lastErr}
}

// judgeFailure judges err, the failure of turn n's attempt on model. It
// returns the RunError that ends the turn (the run is cancelled, the request
// was malformed, or a rate limit left no other model to fail over to), or nil
// when the turn goes on; then slow reports a rate limit or timeout (route past
// the model) and permanent a permanent error (never repeat it on the model).
func judgeFailure(ctx context.Context, n int, model string, err error, failover bool) (end error, slow, permanent bool) {
	if cancelled(ctx, err) {
		cause := ctx.Err()
		if cause == nil {
			cause = err
		}
		return &RunError{Turn: n, Model: model, Reason: ErrCanceled, Err: cause}, false, false
	}
	if malformed(err) { // the request was bad, not the model: no other model will take it
		return &RunError{Turn: n, Model: model, Reason: ErrTurnFailed, Err: err}, false, false
	}
	limited, _ := retry.LimitOf(err)
	if limited != retry.NoLimit && !failover {
		// No other model was usable: the ladder waited what it could
		// within the deadline (SEMANTICS 7.1, 7.3); the caller acts on it.
		return &RunError{Turn: n, Model: model, Reason: ErrTurnFailed, Err: err}, false, false
	}
	return nil, limited != retry.NoLimit || retry.IsTimeout(err), retry.Classify(err) == retry.Permanent
}

// otherUsable reports whether a model other than model, and not one that
// failed the turn slowly, is usable for the turn's next attempt (SEMANTICS 7):
// the primary while the breaker routes to it, or a chain entry that is not
// failed. It is a pure read of the model breaker.
func (a *Agent) otherUsable(model string, slow []string) bool {
	s := a.models.Snapshot()
	if p := a.primaryModel; p != model && !slices.Contains(slow, p) && s.State != fallback.Fallback {
		return true
	}
	for _, e := range s.Chain {
		if e.Model != model && !e.Failed && !slices.Contains(slow, e.Model) {
			return true
		}
	}
	return false
}

// attempt runs the retry ladder around one model request and settles the
// ticket. failover is the ladder's Policy.Failover: another model is usable.
func (a *Agent) attempt(ctx context.Context, runID string, n, attempt int, ticket fallback.Ticket, req Request, failover bool) (TurnRecord, Message, error) {
	model := ticket.Model()
	rec := TurnRecord{Turn: n, Attempt: attempt, Model: model, Probe: ticket.IsProbe()}
	p, ok := a.providers[model]
	if !ok { // unreachable: New checks every model of the chain
		ticket.Cancel()
		rec.Err = errors.New("agent: no provider for model " + model)
		return rec, Message{}, retry.Unrecoverable(rec.Err)
	}
	req.Model = model
	a.emit(ctx, Event{Kind: EventTurnStarted, RunID: runID, Turn: n, Attempt: attempt, Model: model, Probe: rec.Probe})

	pol := a.policy(ctx, runID, n, attempt, ticket, failover)
	// A probe turn never outlives its lease (SEMANTICS 3): its requests
	// run under the lease left on the model breaker's clock; a cut is a failure.
	rctx := context.WithValue(ctx, attemptKey{}, attemptID{n, attempt})
	if end, ok := ticket.Deadline(); ok {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(rctx, end.Sub(a.modelNow()))
		defer cancel()
	}
	start, begun := time.Now(), a.modelNow()
	resp, err := retry.Do(rctx, pol, func(ctx context.Context) (Response, error) {
		rec.Requests++
		if a.requestTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, a.requestTimeout)
			defer cancel()
		}
		return p.Complete(ctx, req)
	})
	rec.Duration = time.Since(start)
	rec.Err = err
	if err == nil {
		rec.Usage, rec.StopReason = resp.Usage, resp.StopReason
	}
	rec.FailedOver = a.settle(ctx, ticket, err, a.modelNow().Sub(begun)) && failover
	// The verdict comes first, so a transition it causes is delivered before
	// the event that reports the attempt.
	a.emit(ctx, Event{Kind: EventTurnFinished, RunID: runID, Turn: n, Attempt: attempt, Model: model, Probe: rec.Probe,
		Requests: rec.Requests, Duration: rec.Duration, Err: err, StopReason: rec.StopReason,
		Usage: rec.Usage, ResponseModel: resp.Model, FailedOver: rec.FailedOver})
	msg := resp.Message
	if msg.Role == "" {
		msg.Role = RoleAssistant
	}
	return rec, msg, err
}

// policy is the retry ladder of one attempt on ticket's model: the agent's
// Policy with failover, the retry events, and the model's retry budget
// (SEMANTICS §8.3: each same-model retry or rate-limited wait spends a token
// of the model breaker's budget, fallback.Turn.Retry).
func (a *Agent) policy(ctx context.Context, runID string, n, attempt int, ticket fallback.Ticket, failover bool) retry.Policy {
	pol := a.retry
	pol.Failover = failover
	model, probe := ticket.Model(), ticket.IsProbe()
	if userRetry := pol.OnRetry; a.onEvent != nil || a.logger != nil {
		pol.OnRetry = func(at retry.Attempt) {
			if userRetry != nil {
				userRetry(at)
			}
			a.emit(ctx, Event{Kind: EventRetry, RunID: runID, Turn: n, Attempt: attempt, Model: model, Probe: probe,
				Requests: at.Number, Err: at.Err, Duration: at.Delay})
		}
	}
	if user := pol.Budget; user != nil {
		pol.Budget = func() bool { return user() && ticket.Retry() }
	} else {
		pol.Budget = ticket.Retry
	}
	return pol
}

// settle gives the ticket the verdict of err (SEMANTICS 4, 6, 7) and reports
// whether it was a slow failure (a rate limit of any kind, or a timeout).
// elapsed is how long the attempt ran, on the model breaker's clock: a
// timeout is dated at its start (§8.4).
func (a *Agent) settle(ctx context.Context, ticket fallback.Ticket, err error, elapsed time.Duration) bool {
	switch {
	case err == nil:
		ticket.Success()
		return false
	case callerCancelled(ctx, err):
		ticket.Cancel() // no verdict: cancellation never counts against the breaker
		return false
	case malformed(err):
		ticket.Cancel() // no verdict: the request was bad, not the model (SEMANTICS 4)
		return false
	}
	f := FailureOf(err, elapsed)
	ticket.Fail(f)
	return f.Timeout || f.Kind != fallback.Transient
}

// malformed reports whether err is the provider rejecting the request itself
// (HTTP 400, 413 or 422): that carries no verdict against the model.
func malformed(err error) bool {
	se, ok := errors.AsType[*retry.StatusError](err)
	if !ok {
		return false
	}
	switch se.Code {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// cancelled reports whether the run must end: ctx is done (cancelled or past
// its deadline), or the error is a plain context.Canceled.
func cancelled(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.Canceled)
}

// callerCancelled reports whether err means the caller gave up (context.Canceled),
// which carries no verdict. A caller's deadline is not that: a request that hangs
// until the caller's deadline is a failure, like any other timeout (SEMANTICS 1,
// "Decision (cancel)").
func callerCancelled(ctx context.Context, err error) bool {
	if cerr := ctx.Err(); cerr != nil {
		return errors.Is(cerr, context.Canceled)
	}
	return errors.Is(err, context.Canceled)
}
