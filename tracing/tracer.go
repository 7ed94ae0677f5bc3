package tracing

import (
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/loopctl/loopctl-go/agent"
)

// ScopeName is the instrumentation scope of the Tracer's spans.
const ScopeName = "github.com/loopctl/loopctl-go/tracing"

// Attribute keys. The gen_ai ones are the OpenTelemetry GenAI semantic
// conventions'; the loopctl ones are this library's.
const (
	OperationName    = attribute.Key("gen_ai.operation.name")
	RequestModel     = attribute.Key("gen_ai.request.model")
	ResponseModel    = attribute.Key("gen_ai.response.model")
	InputTokens      = attribute.Key("gen_ai.usage.input_tokens")
	OutputTokens     = attribute.Key("gen_ai.usage.output_tokens")
	ToolName         = attribute.Key("gen_ai.tool.name")
	ToolCallID       = attribute.Key("gen_ai.tool.call.id")
	Turn             = attribute.Key("loopctl.turn")
	Attempt          = attribute.Key("loopctl.attempt")
	Probe            = attribute.Key("loopctl.probe")
	Requests         = attribute.Key("loopctl.requests")
	ResolvedTool     = attribute.Key("loopctl.tool.resolved")
	ToolOutcome      = attribute.Key("loopctl.tool.outcome")
	BreakerKind      = attribute.Key("loopctl.breaker.kind")
	BreakerName      = attribute.Key("loopctl.breaker.name")
	BreakerFrom      = attribute.Key("loopctl.breaker.from")
	BreakerTo        = attribute.Key("loopctl.breaker.to")
	BreakerFromModel = attribute.Key("loopctl.breaker.from_model")
	BreakerToModel   = attribute.Key("loopctl.breaker.to_model")
	RetryWait        = attribute.Key("loopctl.retry.wait")
	RetryRequest     = attribute.Key("loopctl.retry.request")
	RunID            = attribute.Key("loopctl.run.id")
	FinishReasons    = attribute.Key("gen_ai.response.finish_reasons")
	FallThrough      = attribute.Key("loopctl.tool.fall_through")
)

// Tracer turns an agent's runs into spans. Build it with [New].
type Tracer struct {
	tracer trace.Tracer

	mu      sync.Mutex
	runs    map[string]*runState // traced runs in flight, by run id
	pending []agent.Event        // breaker transitions not yet given to a run
}

// maxPending bounds the transitions waiting for a run event.
const maxPending = 32

// runState holds the open spans of one run in flight. Turns and attempts are
// keyed by their numbers: a provider wrapper may open an attempt's span
// before the attempt's event arrives (with concurrent runs, another run's
// goroutine may be delivering the agent's events), and the event then finds it.
type runState struct {
	ctx      context.Context // carries the run span
	span     trace.Span
	turns    map[int]spanCtx
	attempts map[attemptNo]spanCtx
}

// spanCtx is an open span and the context that carries it.
type spanCtx struct {
	span trace.Span
	ctx  context.Context
}

// attemptNo names a model attempt of a run.
type attemptNo struct{ turn, attempt int }

// New returns a Tracer whose spans come from tp (e.g. otel.GetTracerProvider()).
func New(tp trace.TracerProvider) *Tracer {
	return &Tracer{tracer: tp.Tracer(ScopeName), runs: make(map[string]*runState)}
}

// Run runs a.Run(ctx, msgs) under a span "invoke_agent", a child of ctx's span.
// The run id (the span's loopctl.run.id) is the one ctx carries
// (agent.ContextWithRunID), else the span's trace id and span id, so
// concurrent runs on one Tracer are told apart by their events. The span ends when the run does, with the run's
// total usage and turn count; a run that ends with an error has status Error.
func (t *Tracer) Run(ctx context.Context, a *agent.Agent, msgs []agent.Message) (*agent.Result, error) {
	ctx, span := t.tracer.Start(ctx, "invoke_agent", trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(OperationName.String("invoke_agent")))
	id, ok := agent.RunIDFromContext(ctx)
	if !ok {
		sc := span.SpanContext()
		id = sc.TraceID().String() + "-" + sc.SpanID().String()
		if !sc.IsValid() {
			id = "run-" + strconv.FormatUint(runSeq.Add(1), 10)
		}
		ctx = agent.ContextWithRunID(ctx, id)
	}
	span.SetAttributes(RunID.String(id))
	rs := &runState{ctx: ctx, span: span, turns: map[int]spanCtx{}, attempts: map[attemptNo]spanCtx{}}
	t.mu.Lock()
	t.runs[id] = rs
	t.mu.Unlock()

	res, err := a.Run(ctx, msgs)

	t.mu.Lock()
	if t.runs[id] == rs {
		delete(t.runs, id)
	}
	rs.endTurns(math.MaxInt)
	t.mu.Unlock()
	if res != nil {
		span.SetAttributes(Turn.Int(res.Turns), InputTokens.Int64(res.Usage.InputTokens), OutputTokens.Int64(res.Usage.OutputTokens))
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
	return res, err
}

// OnEvent records ev; use it as (or call it from) agent.Config.OnEvent.
// Events of runs not started with [Tracer.Run] are ignored. A breaker
// transition (which belongs to the Agent, not to a run) becomes an event on
// the span of the run whose event follows it: the agent delivers a
// transition just before the event of the turn or tool call that caused it.
func (t *Tracer) OnEvent(ev agent.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ev.Kind == agent.EventModelTransition || ev.Kind == agent.EventToolTransition {
		if len(t.pending) == maxPending {
			t.pending = t.pending[1:]
		}
		t.pending = append(t.pending, ev)
		return
	}
	rs := t.runs[ev.RunID]
	if rs == nil {
		return
	}
	for _, tr := range t.pending {
		rs.transition(tr)
	}
	t.pending = t.pending[:0]
	switch ev.Kind {
	case agent.EventTurnStarted:
		rs.endTurns(ev.Turn) // the events of earlier turns have all been delivered
		a := t.openAttempt(rs, ev.Turn, ev.Attempt, ev.Model)
		a.span.SetAttributes(Probe.Bool(ev.Probe))
	case agent.EventRetry:
		rs.retry(ev)
	case agent.EventTurnFinished:
		rs.endAttempt(ev)
	case agent.EventToolCall:
		t.toolCall(rs, ev)
	}
}

// retry adds a "retry" span event, with the request number, the wait and the
// error, to the attempt ev belongs to.
func (rs *runState) retry(ev agent.Event) {
	a, ok := rs.attempts[attemptNo{ev.Turn, ev.Attempt}]
	if !ok {
		return
	}
	attrs := []attribute.KeyValue{RetryRequest.Int(ev.Requests), RetryWait.String(ev.Duration.String())}
	if ev.Err != nil {
		attrs = append(attrs, attribute.String("error.message", ev.Err.Error()))
	}
	a.span.AddEvent("retry", trace.WithAttributes(attrs...))
}

// endAttempt ends the span of the attempt ev finished, with its request count
// and either its error or its response model, token usage and finish reason.
func (rs *runState) endAttempt(ev agent.Event) {
	k := attemptNo{ev.Turn, ev.Attempt}
	a, ok := rs.attempts[k]
	if !ok {
		return
	}
	a.span.SetAttributes(Requests.Int(ev.Requests))
	if ev.Err != nil {
		setError(a.span, ev.Err)
	} else {
		rm := ev.ResponseModel
		if rm == "" {
			rm = ev.Model
		}
		a.span.SetAttributes(ResponseModel.String(rm),
			InputTokens.Int64(ev.Usage.InputTokens), OutputTokens.Int64(ev.Usage.OutputTokens))
		if ev.StopReason != "" {
			a.span.SetAttributes(FinishReasons.StringSlice([]string{string(ev.StopReason)}))
		}
	}
	a.span.End()
	delete(rs.attempts, k)
}

// toolCall records the tool call ev reports as an "execute_tool" span under its
// turn (or the run), ending now and starting ev.Duration earlier, with an error
// status unless its outcome is OK.
func (t *Tracer) toolCall(rs *runState, ev agent.Event) {
	now := time.Now()
	parent := rs.ctx
	if tc, ok := rs.turns[ev.Turn]; ok {
		parent = tc.ctx
	}
	_, span := t.tracer.Start(parent, "execute_tool "+ev.Tool, trace.WithTimestamp(now.Add(-ev.Duration)),
		trace.WithAttributes(OperationName.String("execute_tool"), ToolName.String(ev.Tool), ToolCallID.String(ev.CallID),
			ResolvedTool.String(ev.ResolvedTool), ToolOutcome.String(ev.Outcome.String())))
	if ev.FallThrough != "" {
		span.SetAttributes(FallThrough.String(ev.FallThrough))
	}
	if ev.Outcome != agent.OutcomeOK {
		err := ev.Err
		if err == nil {
			err = errors.New(ev.Text)
		}
		setError(span, err)
	}
	span.End(trace.WithTimestamp(now))
}

// transition adds a breaker transition event to the run's span.
func (rs *runState) transition(ev agent.Event) {
	if ev.Kind == agent.EventModelTransition {
		tr := ev.Transition
		rs.span.AddEvent("breaker.transition", trace.WithAttributes(BreakerKind.String("model"),
			BreakerFrom.String(tr.From.String()), BreakerTo.String(tr.To.String()),
			BreakerFromModel.String(tr.FromModel), BreakerToModel.String(tr.ToModel)))
		return
	}
	rs.span.AddEvent("breaker.transition", trace.WithAttributes(BreakerKind.String("tool"),
		BreakerName.String(ev.Tool), BreakerFrom.String(ev.From.String()), BreakerTo.String(ev.To.String())))
}

func setError(s trace.Span, err error) {
	s.RecordError(err)
	s.SetStatus(codes.Error, err.Error())
}

// openTurn returns turn n's span, started now if it is not open.
func (t *Tracer) openTurn(rs *runState, n int) spanCtx {
	if tc, ok := rs.turns[n]; ok {
		return tc
	}
	ctx, span := t.tracer.Start(rs.ctx, "turn "+strconv.Itoa(n), trace.WithAttributes(Turn.Int(n)))
	tc := spanCtx{span, ctx}
	rs.turns[n] = tc
	return tc
}

// openAttempt returns the span of attempt a of turn n, started now (under its
// turn) if it is not open.
func (t *Tracer) openAttempt(rs *runState, n, a int, model string) spanCtx {
	k := attemptNo{n, a}
	if ac, ok := rs.attempts[k]; ok {
		return ac
	}
	ctx, span := t.tracer.Start(t.openTurn(rs, n).ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(OperationName.String("chat"), RequestModel.String(model), Turn.Int(n), Attempt.Int(a)))
	ac := spanCtx{span, ctx}
	rs.attempts[k] = ac
	return ac
}

// endTurns ends the turns numbered below n, and their attempts still open.
func (rs *runState) endTurns(n int) {
	for k, a := range rs.attempts {
		if k.turn < n {
			a.span.End()
			delete(rs.attempts, k)
		}
	}
	for k, tc := range rs.turns {
		if k < n {
			tc.span.End()
			delete(rs.turns, k)
		}
	}
}

// parent returns the context a request span of ctx starts from: the span of
// the model attempt ctx belongs to (agent.AttemptFromContext) in the traced
// run ctx carries, opened now if its event has not arrived yet; nil if ctx
// belongs to no traced run.
func (t *Tracer) parent(ctx context.Context, model string) context.Context {
	id, ok := agent.RunIDFromContext(ctx)
	if !ok {
		return nil
	}
	n, a, ok := agent.AttemptFromContext(ctx)
	if !ok {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if rs := t.runs[id]; rs != nil {
		return t.openAttempt(rs, n, a, model).ctx
	}
	return nil
}

var runSeq atomic.Uint64
