package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
)

// EventKind says what an [Event] reports.
type EventKind int

// The kinds of [Event].
const (
	// EventTurnStarted: a model attempt of a turn begins (after the model
	// breaker's gate routed it). Turn, Attempt, Model and Probe are set.
	EventTurnStarted EventKind = iota + 1
	// EventTurnFinished: a model attempt ended. Turn, Attempt, Model, Probe,
	// Requests, Duration are set; Err is the attempt's error (nil on success).
	// On success, StopReason, Usage and ResponseModel are the response's.
	EventTurnFinished
	// EventRetry: the retry ladder is about to wait and send the request again.
	// Turn, Attempt, Model, Requests (the failed request's number), Err and
	// Duration (the wait) are set.
	EventRetry
	// EventToolCall: a tool call was settled. Turn, CallID, Tool, Arguments,
	// ResolvedTool, Outcome, Duration are set; Text is the soft error text the model reads
	// ("" on success) and Err the underlying error, if any. When the call fell
	// through from a failed recovery probe, FallThrough names the tool whose
	// probe failed, and ResolvedTool, Outcome, Text and Err describe the
	// second call, the one whose result the model reads.
	EventToolCall
	// EventModelTransition: the model breaker changed state or advanced its
	// chain. Transition is set, and Model is Transition.ToModel.
	EventModelTransition
	// EventToolTransition: a tool breaker changed state. Tool, From and To are set.
	EventToolTransition
	// EventTurnRefused: the model breaker refused a model attempt
	// (fallback.ErrExhausted: every model of the chain is unavailable), so no
	// request was sent and the run ends. Turn and Attempt are set, Err is the
	// refusal, and Model is the model of the turn's previous attempt ("" if
	// none).
	EventTurnRefused
)

var kindNames = [...]string{
	EventTurnStarted:     "turn-started",
	EventTurnFinished:    "turn-finished",
	EventRetry:           "retry",
	EventToolCall:        "tool-call",
	EventModelTransition: "model-transition",
	EventToolTransition:  "tool-transition",
	EventTurnRefused:     "turn-refused",
}

// String returns a short lowercase name, e.g. "turn-started".
func (k EventKind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Outcome is how a tool call ended.
type Outcome int

// The outcomes of a tool call.
const (
	OutcomeOK           Outcome = iota // the tool returned a result
	OutcomeError                       // the tool returned an error (a failure for its breaker)
	OutcomeRefused                     // the tool breaker refused the call (not a failure)
	OutcomePanic                       // the tool panicked (a failure)
	OutcomeTimeout                     // the tool ran past its timeout, or its probe past its lease (a failure)
	OutcomeUnknown                     // the model asked for a tool that does not exist
	OutcomeCancelled                   // the caller cancelled the run (no verdict)
	OutcomeBadArguments                // the arguments did not decode (no verdict: the model's mistake)
	OutcomeUnavailable                 // what serves the tool was down (an [*UnavailableError]; no verdict)
)

var outcomeNames = [...]string{
	OutcomeOK:           "ok",
	OutcomeError:        "error",
	OutcomeRefused:      "refused",
	OutcomePanic:        "panic",
	OutcomeTimeout:      "timeout",
	OutcomeUnknown:      "unknown",
	OutcomeCancelled:    "cancelled",
	OutcomeBadArguments: "bad-arguments",
	OutcomeUnavailable:  "unavailable",
}

// String returns the outcome's name: "ok", "error", "refused", "panic",
// "timeout", "unknown", "cancelled", "bad-arguments" or "unavailable".
func (o Outcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "invalid"
}

// Event reports one step of a run or one breaker transition. Which fields are
// set depends on Kind (see the [EventKind] constants). Events of a run (turn,
// retry and tool events) carry its RunID; breaker transitions belong to the
// Agent, not to a run, and carry none.
//
// Events are delivered in the order they happened. A verdict is applied
// before the event that reports it, so a breaker transition caused by a turn
// or a tool call is delivered just before that turn's EventTurnFinished or
// that call's EventToolCall.
type Event struct {
	Kind  EventKind
	RunID string // the run's id (see Result.RunID); "" for breaker transitions

	Turn     int           // 1-based turn number (turn and tool events)
	Attempt  int           // 1-based model attempt within the turn (turn events)
	Model    string        // the routed model (turn events), or the model routed to (transitions)
	Probe    bool          // the turn ticket is the model breaker's recovery probe
	Requests int           // requests sent by the retry ladder in this attempt
	Duration time.Duration // attempt or call duration; for EventRetry, the wait
	Err      error         // the attempt's or call's error, if any

	StopReason    StopReason // EventTurnFinished: the response's stop reason
	Usage         Usage      // EventTurnFinished: the response's token usage (zero on failure)
	ResponseModel string     // EventTurnFinished: the model the server reported (Response.Model; "" if unknown)
	FailedOver    bool       // EventTurnFinished: ended at once on a rate limit or timeout because another model was usable (TurnRecord.FailedOver)

	CallID       string          // the model's id for the tool call
	Arguments    json.RawMessage // EventToolCall: the arguments the model sent (not a copy: do not modify)
	Tool         string          // the tool the model asked for; for EventToolTransition, the tool
	ResolvedTool string          // the tool that ran, as the router picked it ("" if none)
	FallThrough  string          // the tool whose failed probe the call fell through from ("" if none)
	Outcome      Outcome         // how the call ended
	Text         string          // the soft error text the model reads ("" on success)

	Transition fallback.Transition // EventModelTransition
	From, To   breaker.State       // EventToolTransition
}

// queued is an event waiting for delivery, with the context of the run
// that produced it (for the logger).
type queued struct {
	ctx context.Context
	ev  Event
}

// emit delivers ev to Config.OnEvent and the logger, serialized and in order.
// It never holds a lock while delivering, so OnEvent may call back into the
// Agent's breakers. ctx is the run's context, handed to the logger.
func (a *Agent) emit(ctx context.Context, ev Event) {
	if a.onEvent == nil && a.logger == nil {
		return
	}
	a.events.Push(queued{ctx, ev})
	a.events.Drain(a.deliver)
}

func (a *Agent) deliver(q queued) {
	if a.logger != nil {
		a.log(q.ctx, q.ev)
	}
	if a.onEvent != nil {
		a.onEvent(q.ev)
	}
}

// log writes ev with the run's context ctx; a run's records start with its id.
func (a *Agent) log(ctx context.Context, ev Event) {
	run := slog.String("run", ev.RunID)
	switch ev.Kind {
	case EventTurnStarted:
		a.logger.LogAttrs(ctx, slog.LevelDebug, "agent: turn started", run,
			slog.Int("turn", ev.Turn), slog.Int("attempt", ev.Attempt),
			slog.String("model", ev.Model), slog.Bool("probe", ev.Probe))
	case EventTurnFinished:
		a.logTurnFinished(ctx, run, ev)
	case EventTurnRefused:
		a.logger.LogAttrs(ctx, slog.LevelWarn, "agent: turn refused by the model breaker", run,
			slog.Int("turn", ev.Turn), slog.Int("attempt", ev.Attempt),
			slog.String("model", ev.Model), slog.Any("error", ev.Err))
	case EventRetry:
		a.logger.LogAttrs(ctx, slog.LevelDebug, "agent: retrying request", run,
			slog.Int("turn", ev.Turn), slog.String("model", ev.Model), slog.Int("request", ev.Requests),
			slog.Duration("wait", ev.Duration), slog.Any("error", ev.Err))
	case EventToolCall:
		a.logToolCall(ctx, run, ev)
	case EventModelTransition:
		t := ev.Transition
		level := slog.LevelInfo
		if t.To == fallback.Fallback {
			level = slog.LevelWarn
		}
		a.logger.LogAttrs(ctx, level, "agent: model breaker transition",
			slog.String("from", t.From.String()), slog.String("to", t.To.String()),
			slog.String("from_model", t.FromModel), slog.String("to_model", t.ToModel))
	case EventToolTransition:
		level := slog.LevelInfo
		if ev.To == breaker.Open {
			level = slog.LevelWarn
		}
		a.logger.LogAttrs(ctx, level, "agent: tool breaker transition",
			slog.String("tool", ev.Tool), slog.String("from", ev.From.String()), slog.String("to", ev.To.String()))
	}
}

// logTurnFinished logs a finished turn: at Warn when it failed or its answer
// was cut at the token limit, at Info otherwise.
func (a *Agent) logTurnFinished(ctx context.Context, run slog.Attr, ev Event) {
	attrs := []slog.Attr{run, slog.Int("turn", ev.Turn), slog.Int("attempt", ev.Attempt),
		slog.String("model", ev.Model), slog.Bool("probe", ev.Probe),
		slog.Int("requests", ev.Requests), slog.Duration("duration", ev.Duration)}
	switch {
	case ev.Err != nil:
		a.logger.LogAttrs(ctx, slog.LevelWarn, "agent: turn failed", append(attrs, slog.Any("error", ev.Err))...)
	case ev.StopReason == StopLength:
		a.logger.LogAttrs(ctx, slog.LevelWarn, "agent: answer cut at the token limit",
			append(attrs, slog.String("stop_reason", string(ev.StopReason)))...)
	case ev.StopReason != "":
		a.logger.LogAttrs(ctx, slog.LevelInfo, "agent: turn finished",
			append(attrs, slog.String("stop_reason", string(ev.StopReason)))...)
	default:
		a.logger.LogAttrs(ctx, slog.LevelInfo, "agent: turn finished", attrs...)
	}
}

// logToolCall logs a tool call: at Debug when it succeeded, at Info when it
// was cancelled, at Warn (with its text, and a panic's stack) otherwise.
func (a *Agent) logToolCall(ctx context.Context, run slog.Attr, ev Event) {
	attrs := []slog.Attr{run, slog.Int("turn", ev.Turn), slog.String("tool", ev.Tool),
		slog.String("resolved", ev.ResolvedTool), slog.String("outcome", ev.Outcome.String()),
		slog.Duration("duration", ev.Duration)}
	if ev.FallThrough != "" {
		attrs = append(attrs, slog.String("fell_through_from", ev.FallThrough))
	}
	switch ev.Outcome {
	case OutcomeOK:
		a.logger.LogAttrs(ctx, slog.LevelDebug, "agent: tool call", attrs...)
	case OutcomeCancelled:
		a.logger.LogAttrs(ctx, slog.LevelInfo, "agent: tool call", attrs...)
	default:
		attrs = append(attrs, slog.String("text", ev.Text))
		if p, ok := ev.Err.(*PanicError); ok {
			attrs = append(attrs, slog.String("stack", string(p.Stack)))
		}
		a.logger.LogAttrs(ctx, slog.LevelWarn, "agent: tool call", attrs...)
	}
}
