package agent

import (
	"context"
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
	EventTurnFinished
	// EventRetry: the retry ladder is about to wait and send the request again.
	// Turn, Attempt, Model, Requests (the failed request's number), Err and
	// Duration (the wait) are set.
	EventRetry
	// EventToolCall: a tool call was settled. Turn, CallID, Tool, ResolvedTool,
	// Outcome, Duration are set; Text is the soft error text the model reads
	// ("" on success) and Err the underlying error, if any.
	EventToolCall
	// EventModelTransition: the model breaker changed state or advanced its
	// chain. Transition is set, and Model is Transition.ToModel.
	EventModelTransition
	// EventToolTransition: a tool breaker changed state. Tool, From and To are set.
	EventToolTransition
)

var kindNames = [...]string{
	EventTurnStarted:     "turn-started",
	EventTurnFinished:    "turn-finished",
	EventRetry:           "retry",
	EventToolCall:        "tool-call",
	EventModelTransition: "model-transition",
	EventToolTransition:  "tool-transition",
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
	OutcomeTimeout                     // the tool ran past Config.ToolTimeout (a failure)
	OutcomeUnknown                     // the model asked for a tool that does not exist
	OutcomeCancelled                   // the caller cancelled the run (no verdict)
	OutcomeBadArguments                // the arguments did not decode (no verdict: the model's mistake)
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
}

// String returns the outcome's name: "ok", "error", "refused", "panic",
// "timeout", "unknown", "cancelled" or "bad-arguments".
func (o Outcome) String() string {
	if o >= 0 && int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "invalid"
}

// Event reports one step of a run or one breaker transition. Which fields are
// set depends on Kind (see the [EventKind] constants).
//
// Events are delivered in the order they happened. A verdict is applied
// before the event that reports it, so a breaker transition caused by a turn
// or a tool call is delivered just before that turn's EventTurnFinished or
// that call's EventToolCall.
type Event struct {
	Kind EventKind

	Turn     int           // 1-based turn number (turn and tool events)
	Attempt  int           // 1-based model attempt within the turn (turn events)
	Model    string        // the routed model (turn events), or the model routed to (transitions)
	Probe    bool          // the turn ticket is the model breaker's recovery probe
	Requests int           // requests sent by the retry ladder in this attempt
	Duration time.Duration // attempt or call duration; for EventRetry, the wait
	Err      error         // the attempt's or call's error, if any

	CallID       string  // the model's id for the tool call
	Tool         string  // the tool the model asked for; for EventToolTransition, the tool
	ResolvedTool string  // the tool the router picked ("" if none)
	Outcome      Outcome // how the call ended
	Text         string  // the soft error text the model reads ("" on success)

	Transition fallback.Transition // EventModelTransition
	From, To   breaker.State       // EventToolTransition
}

// emit delivers ev to Config.OnEvent and the logger, serialized and in order.
// It never holds a lock while delivering, so OnEvent may call back into the
// Agent's breakers.
func (a *Agent) emit(ev Event) {
	if a.onEvent == nil && a.logger == nil {
		return
	}
	a.events.Push(ev)
	a.events.Drain(a.deliver)
}

func (a *Agent) deliver(ev Event) {
	if a.logger != nil {
		a.log(ev)
	}
	if a.onEvent != nil {
		a.onEvent(ev)
	}
}

func (a *Agent) log(ev Event) {
	ctx := context.Background()
	switch ev.Kind {
	case EventTurnStarted:
		a.logger.LogAttrs(ctx, slog.LevelDebug, "agent: turn started",
			slog.Int("turn", ev.Turn), slog.Int("attempt", ev.Attempt),
			slog.String("model", ev.Model), slog.Bool("probe", ev.Probe))
	case EventTurnFinished:
		attrs := []slog.Attr{slog.Int("turn", ev.Turn), slog.Int("attempt", ev.Attempt),
			slog.String("model", ev.Model), slog.Bool("probe", ev.Probe),
			slog.Int("requests", ev.Requests), slog.Duration("duration", ev.Duration)}
		if ev.Err != nil {
			a.logger.LogAttrs(ctx, slog.LevelWarn, "agent: turn failed", append(attrs, slog.Any("error", ev.Err))...)
		} else {
			a.logger.LogAttrs(ctx, slog.LevelInfo, "agent: turn finished", attrs...)
		}
	case EventRetry:
		a.logger.LogAttrs(ctx, slog.LevelDebug, "agent: retrying request",
			slog.Int("turn", ev.Turn), slog.String("model", ev.Model), slog.Int("request", ev.Requests),
			slog.Duration("wait", ev.Duration), slog.Any("error", ev.Err))
	case EventToolCall:
		attrs := []slog.Attr{slog.Int("turn", ev.Turn), slog.String("tool", ev.Tool),
			slog.String("resolved", ev.ResolvedTool), slog.String("outcome", ev.Outcome.String()),
			slog.Duration("duration", ev.Duration)}
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
