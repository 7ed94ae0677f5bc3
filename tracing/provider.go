package tracing

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/loopctl/loopctl-go/agent"
)

// Provider wraps p so that every request it sends is a span "request <model>"
// (gen_ai.operation.name "chat", the request model, and on success the
// response model (agent.Response.Model, else the request model) and token
// usage; status Error on failure). It is optional: the attempt spans get
// their response model and usage from the agent's events; the wrapper adds
// one span per request the retry ladder sends. The span is a child of the
// model attempt's span of the traced run ctx belongs to (agent.RunIDFromContext),
// else of ctx's span.
func (t *Tracer) Provider(p agent.Provider) agent.Provider { return &provider{t: t, p: p} }

type provider struct {
	t *Tracer
	p agent.Provider
}

func (w *provider) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	parent := ctx
	var attempt trace.Span
	if pc := w.t.parent(ctx, req.Model); pc != nil {
		// The attempt's span is the parent; ctx still carries cancellation.
		attempt = trace.SpanFromContext(pc)
		parent = trace.ContextWithSpan(ctx, attempt)
	}
	ctx, span := w.t.tracer.Start(parent, "request "+req.Model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(OperationName.String("chat"), RequestModel.String(req.Model)))
	defer span.End()
	resp, err := w.p.Complete(ctx, req)
	if err != nil {
		setError(span, err)
		return resp, err
	}
	rm := resp.Model
	if rm == "" {
		rm = req.Model
	}
	span.SetAttributes(ResponseModel.String(rm),
		InputTokens.Int64(resp.Usage.InputTokens), OutputTokens.Int64(resp.Usage.OutputTokens))
	return resp, nil
}
