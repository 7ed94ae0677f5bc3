package cli

import (
	"context"
	"errors"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/tracing"
)

// The gateway's own span attributes; the GenAI ones and the breaker's are
// the tracing package's (tracing.RequestModel, tracing.Probe, ...).
const (
	attrAPI          = attribute.Key("loopctl.api")           // the endpoint: chat, responses, messages, embeddings, count_tokens
	attrOutcome      = attribute.Key("loopctl.outcome")       // the request's outcome (loopctl_gateway_requests_total's)
	attrAttempts     = attribute.Key("loopctl.attempts")      // the request's attempts
	attrServed       = attribute.Key("loopctl.served")        // the upstream/model that served the request
	attrClient       = attribute.Key("loopctl.client")        // the client key's name
	attrTranslated   = attribute.Key("loopctl.translated")    // x-loopctl-translated
	attrStream       = attribute.Key("loopctl.stream")        // the client asked for a stream
	attrModel        = attribute.Key("loopctl.model")         // an attempt's route: the client's model name
	attrTarget       = attribute.Key("loopctl.target")        // an attempt's upstream/model
	attrUpstream     = attribute.Key("loopctl.upstream")      // an attempt's upstream
	attrHedge        = attribute.Key("loopctl.hedge")         // the attempt is a hedge
	attrState        = attribute.Key("loopctl.breaker.state") // the model breaker's state when it routed the attempt
	attrRouted       = attribute.Key("loopctl.breaker.routed_model")
	attrVerdict      = attribute.Key("loopctl.verdict")      // how the attempt's ticket settled
	attrFailureKind  = attribute.Key("loopctl.failure.kind") // a failure's kind: transient, rate-limit, quota
	genAISystem      = attribute.Key("gen_ai.system")        // gen_ai.provider.name's older name, which many backends still read
	operationUnknown = "count_tokens"
)

// spanObserver is the gateway.Observer of `serve` with OpenTelemetry on:
// a server span per client request ("chat smart"), a client span per
// upstream attempt under it ("chat gpt-5"), each with the GenAI semantic
// conventions' attributes, the attempt's with the breaker's decisions
// (probe, state, verdict) and a "breaker.transition" event when the
// breaker's state or routed model changed as it settled.
type spanObserver struct{ tracer trace.Tracer }

func newSpanObserver(tp trace.TracerProvider) *spanObserver {
	return &spanObserver{tracer: tp.Tracer("github.com/loopctl/loopctl-go/gateway")}
}

// served is a request's endpoint and what its served attempt said: the
// request span's response model and usage. The lock orders an attempt's
// end and its request's.
type served struct {
	api      string
	mu       sync.Mutex
	model    string
	in, out  int64
	hasUsage bool
}

type servedKey struct{}

// attemptSpan is what an attempt's span remembers of its start.
type attemptSpan struct{ start gateway.AttemptStart }

type attemptKey struct{}

// operation is the GenAI operation of an endpoint.
func operation(api string) string {
	switch api {
	case "chat", "responses", "messages":
		return "chat"
	case "embeddings":
		return "embeddings"
	}
	return operationUnknown
}

// StartRequest starts the request's server span.
func (o *spanObserver) StartRequest(ctx context.Context, r gateway.RequestStart) context.Context {
	op := operation(r.API)
	ctx, _ = o.tracer.Start(ctx, op, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(tracing.OperationName.String(op), attrAPI.String(r.API)))
	return context.WithValue(ctx, servedKey{}, &served{api: r.API})
}

// EndRequest ends the request's span, named for its operation and model.
func (o *spanObserver) EndRequest(ctx context.Context, r gateway.RequestEnd) {
	span := trace.SpanFromContext(ctx)
	op := operation(r.API)
	if r.Model != "" {
		span.SetName(op + " " + r.Model)
	}
	span.SetAttributes(tracing.RequestModel.String(r.Model), attrOutcome.String(r.Outcome), attrAttempts.Int(r.Attempts),
		semconv.HTTPResponseStatusCode(r.Status), attrStream.Bool(r.Stream))
	for k, v := range map[attribute.Key]string{attrServed: r.Served, attrClient: r.Client, attrTranslated: r.Translated} {
		if v != "" {
			span.SetAttributes(k.String(v))
		}
	}
	if s, ok := ctx.Value(servedKey{}).(*served); ok {
		s.mu.Lock()
		if s.model != "" {
			span.SetAttributes(tracing.ResponseModel.String(s.model))
		}
		if s.hasUsage {
			span.SetAttributes(tracing.InputTokens.Int64(s.in), tracing.OutputTokens.Int64(s.out))
		}
		s.mu.Unlock()
	}
	if failedOutcome(r.Outcome) {
		span.SetAttributes(semconv.ErrorTypeKey.String(r.Outcome))
		span.SetStatus(codes.Error, r.Error)
	}
	span.End()
}

// failedOutcome reports whether a request's outcome is the gateway's
// failure (not a success, the client's own error or its going away).
func failedOutcome(outcome string) bool {
	switch outcome {
	case "success", "client_error", "cancel", "invalid":
		return false
	}
	return true
}

// StartAttempt starts the attempt's client span, a child of its request's.
func (o *spanObserver) StartAttempt(ctx context.Context, a gateway.AttemptStart) context.Context {
	op := operation(requestAPI(ctx))
	provider := providerName(a.API, a.Host)
	attrs := []attribute.KeyValue{tracing.OperationName.String(op), semconv.GenAIProviderNameKey.String(provider), genAISystem.String(provider),
		tracing.RequestModel.String(a.UpstreamModel), attrModel.String(a.Model), attrTarget.String(a.Target), attrUpstream.String(a.Upstream),
		tracing.Attempt.Int(a.Attempt), tracing.Probe.Bool(a.Probe), attrHedge.Bool(a.Hedge),
		attrState.String(a.State.String()), attrRouted.String(a.ActiveModel)}
	if a.Host != "" {
		attrs = append(attrs, semconv.ServerAddress(a.Host))
	}
	ctx, _ = o.tracer.Start(ctx, op+" "+a.UpstreamModel, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return context.WithValue(ctx, attemptKey{}, &attemptSpan{start: a})
}

// requestAPI is the endpoint of the request ctx belongs to.
func requestAPI(ctx context.Context) string {
	if s, ok := ctx.Value(servedKey{}).(*served); ok {
		return s.api
	}
	return "chat"
}

// EndAttempt ends the attempt's span with its verdict and what the
// breaker did as it settled.
func (o *spanObserver) EndAttempt(ctx context.Context, a gateway.AttemptEnd) {
	span := trace.SpanFromContext(ctx)
	span.SetAttributes(attrVerdict.String(a.Verdict))
	if a.Status != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(a.Status))
	}
	if a.Verdict == gateway.VerdictSuccess {
		o.served(ctx, span, a)
	}
	if a.Verdict == gateway.VerdictFailure {
		span.SetAttributes(attrFailureKind.String(a.Kind.String()), semconv.ErrorTypeKey.String(a.Kind.String()))
		err := a.Err
		if err == nil {
			err = errors.New("failure: " + a.Kind.String())
		}
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	if st, ok := ctx.Value(attemptKey{}).(*attemptSpan); ok && (st.start.State != a.State || st.start.ActiveModel != a.ActiveModel) {
		span.AddEvent("breaker.transition", trace.WithAttributes(tracing.BreakerKind.String("model"), tracing.BreakerName.String(st.start.Model),
			tracing.BreakerFrom.String(st.start.State.String()), tracing.BreakerTo.String(a.State.String()),
			tracing.BreakerFromModel.String(st.start.ActiveModel), tracing.BreakerToModel.String(a.ActiveModel)))
	}
	span.End()
}

// served sets a served attempt's response model and usage on its span and
// keeps them for its request's.
func (o *spanObserver) served(ctx context.Context, span trace.Span, a gateway.AttemptEnd) {
	model := a.ResponseModel
	if model == "" {
		if st, ok := ctx.Value(attemptKey{}).(*attemptSpan); ok {
			model = st.start.UpstreamModel
		}
	}
	span.SetAttributes(tracing.ResponseModel.String(model))
	if a.Usage {
		span.SetAttributes(tracing.InputTokens.Int64(a.InputTokens), tracing.OutputTokens.Int64(a.OutputTokens))
	}
	if s, ok := ctx.Value(servedKey{}).(*served); ok {
		s.mu.Lock()
		s.model, s.in, s.out, s.hasUsage = model, a.InputTokens, a.OutputTokens, a.Usage
		s.mu.Unlock()
	}
}

// providerName is the GenAI provider of an upstream's API: Azure OpenAI
// is an openai upstream on an *.openai.azure.com host.
func providerName(api, host string) string {
	switch api {
	case gateway.APIAnthropic:
		return "anthropic"
	case gateway.APIBedrock:
		return "aws.bedrock"
	case gateway.APIVertex:
		return "gcp.vertex_ai"
	}
	if strings.HasSuffix(host, ".openai.azure.com") {
		return "azure.ai.openai"
	}
	return "openai"
}
