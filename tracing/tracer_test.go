package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.uber.org/goleak"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/openai"
	"github.com/loopctl/loopctl-go/retry"
	"github.com/loopctl/loopctl-go/tracing"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// tree renders the spans as an indented tree of names, children in start order.
func tree(spans tracetest.SpanStubs) string {
	children := map[string][]tracetest.SpanStub{}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if s.Parent.IsValid() {
			p := s.Parent.SpanID().String()
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var walk func(s tracetest.SpanStub, depth int)
	walk = func(s tracetest.SpanStub, depth int) {
		status := ""
		if s.Status.Code == codes.Error {
			status = " [error]"
		}
		fmt.Fprintf(&b, "%s%s%s\n", strings.Repeat("  ", depth), s.Name, status)
		kids := children[s.SpanContext.SpanID().String()]
		slices.SortStableFunc(kids, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
		for _, k := range kids {
			walk(k, depth+1)
		}
	}
	for _, r := range roots {
		walk(r, 0)
	}
	return b.String()
}

func attr(s tracetest.SpanStub, k attribute.Key) attribute.Value {
	for _, kv := range s.Attributes {
		if kv.Key == k {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func find(t *testing.T, spans tracetest.SpanStubs, name string) []tracetest.SpanStub {
	t.Helper()
	var out []tracetest.SpanStub
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no span %q", name)
	}
	return out
}

// TestRunWithFailover runs an agent over the real openai-go adapter against a
// scripted server whose primary is down, and checks the span tree: the run,
// its turns, each model attempt with its requests (the failed ones with a
// retry event and status Error), the tool call, the GenAI attributes and the
// breaker transition event.
func TestRunWithFailover(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"gpt-a": llmtest.Always(llmtest.Error(503)),
		"gpt-b": llmtest.Sequence(
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{llmtest.Call("search", `{}`)}, Usage: llmtest.Usage{InputTokens: 12, OutputTokens: 3}},
			llmtest.Reply{Text: "done", Usage: llmtest.Usage{InputTokens: 20, OutputTokens: 5}},
		),
	}))
	defer srv.Close()
	p, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tr := tracing.New(tp)

	a, err := agent.New(agent.Config{
		Provider: tr.Provider(p),
		Models:   fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"}},
		Retry:    retry.Policy{MaxRetries: 1, BaseDelay: time.Millisecond},
		Tools: []agent.Tool{{Name: "search", Func: func(context.Context, json.RawMessage) (string, error) {
			return "found", nil
		}}},
		OnEvent: tr.OnEvent,
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Run(t.Context(), a, []agent.Message{{Role: agent.RoleUser, Content: "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Answer != "done" {
		t.Fatalf("answer = %q", res.Answer)
	}

	spans := exp.GetSpans()
	want := `invoke_agent
  turn 1
    chat gpt-a [error]
      request gpt-a [error]
      request gpt-a [error]
    chat gpt-a [error]
      request gpt-a [error]
      request gpt-a [error]
    chat gpt-a [error]
      request gpt-a [error]
      request gpt-a [error]
    chat gpt-b
      request gpt-b
    execute_tool search
  turn 2
    chat gpt-b
      request gpt-b
`
	if got := tree(spans); got != want {
		t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
	}

	run := find(t, spans, "invoke_agent")[0]
	if v := attr(run, tracing.OperationName).AsString(); v != "invoke_agent" {
		t.Errorf("run operation = %q", v)
	}
	if in, out := attr(run, tracing.InputTokens).AsInt64(), attr(run, tracing.OutputTokens).AsInt64(); in != 32 || out != 8 {
		t.Errorf("run usage = %d/%d, want 32/8", in, out)
	}
	var transitions []string
	for _, e := range run.Events {
		if e.Name != "breaker.transition" {
			continue
		}
		var kind, from, to, toModel string
		for _, kv := range e.Attributes {
			switch kv.Key {
			case tracing.BreakerKind:
				kind = kv.Value.AsString()
			case tracing.BreakerFrom:
				from = kv.Value.AsString()
			case tracing.BreakerTo:
				to = kv.Value.AsString()
			case tracing.BreakerToModel:
				toModel = kv.Value.AsString()
			}
		}
		transitions = append(transitions, kind+" "+from+"->"+to+" "+toModel)
	}
	if want := []string{"model primary->fallback gpt-b"}; !slices.Equal(transitions, want) {
		t.Errorf("transition events = %q, want %q", transitions, want)
	}

	failed := find(t, spans, "chat gpt-a")[0]
	if v := attr(failed, tracing.RequestModel).AsString(); v != "gpt-a" {
		t.Errorf("failed attempt request model = %q", v)
	}
	if v := attr(failed, tracing.OperationName).AsString(); v != "chat" {
		t.Errorf("attempt operation = %q", v)
	}
	if n := len(failed.Events); n < 2 { // the retry event and the recorded error
		t.Errorf("failed attempt has %d events, want a retry and an exception: %+v", n, failed.Events)
	} else if failed.Events[0].Name != "retry" {
		t.Errorf("first event of failed attempt = %q, want retry", failed.Events[0].Name)
	}
	served := find(t, spans, "chat gpt-b")
	if v := attr(served[0], tracing.ResponseModel).AsString(); v != "gpt-b" {
		t.Errorf("response model = %q", v)
	}
	if v := attr(served[0], tracing.FinishReasons).AsStringSlice(); len(v) != 1 || v[0] != "tool_calls" {
		t.Errorf("finish reasons = %q, want [tool_calls]", v)
	}
	if in, out := attr(served[0], tracing.InputTokens).AsInt64(), attr(served[0], tracing.OutputTokens).AsInt64(); in != 12 || out != 3 {
		t.Errorf("attempt usage = %d/%d, want 12/3", in, out)
	}
	req := find(t, spans, "request gpt-b")[1]
	if in := attr(req, tracing.InputTokens).AsInt64(); in != 20 {
		t.Errorf("request usage = %d, want 20", in)
	}
	tool := find(t, spans, "execute_tool search")[0]
	if v := attr(tool, tracing.ToolName).AsString(); v != "search" {
		t.Errorf("tool name = %q", v)
	}
	if v := attr(tool, tracing.OperationName).AsString(); v != "execute_tool" {
		t.Errorf("tool operation = %q", v)
	}
	if v := attr(tool, tracing.ToolCallID).AsString(); v == "" {
		t.Error("tool call id missing")
	}
	for _, s := range spans {
		if s.SpanContext.TraceID() != run.SpanContext.TraceID() {
			t.Errorf("span %q is in another trace", s.Name)
		}
	}
}

// TestConcurrentRuns checks that concurrent runs on one Tracer each get their
// own, complete span tree.
func TestConcurrentRuns(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("ok")))
	defer srv.Close()
	p, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tr := tracing.New(tp)
	a, err := agent.New(agent.Config{Provider: tr.Provider(p), Models: fallback.Settings{Primary: "m"}, OnEvent: tr.OnEvent})
	if err != nil {
		t.Fatal(err)
	}
	const runs = 4
	errs := make(chan error, runs)
	for i := range runs {
		go func() {
			ctx := t.Context()
			if i == 0 {
				ctx = agent.ContextWithRunID(ctx, "mine")
			}
			_, err := tr.Run(ctx, a, []agent.Message{{Role: agent.RoleUser, Content: "hi"}})
			errs <- err
		}()
	}
	for range runs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got := tree(exp.GetSpans())
	want := strings.Repeat("invoke_agent\n  turn 1\n    chat m\n      request m\n", runs)
	if got != want {
		t.Fatalf("span trees:\n%s\nwant:\n%s", got, want)
	}
	ids := map[string]bool{}
	for _, s := range find(t, exp.GetSpans(), "invoke_agent") {
		ids[attr(s, tracing.RunID).AsString()] = true
	}
	if len(ids) != runs || !ids["mine"] {
		t.Fatalf("run ids = %v, want %d distinct ones including \"mine\"", ids, runs)
	}
}

// reporting answers every request with text, the given usage and the model
// the server "reported" (reported[req.Model], "" if absent).
type reporting map[string]string

func (r reporting) Complete(_ context.Context, req agent.Request) (agent.Response, error) {
	return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "ok"}, Model: r[req.Model],
		Usage: agent.Usage{InputTokens: 7, OutputTokens: 2}, StopReason: agent.StopEnd}, nil
}

// TestAttemptFromEvent: with no provider wrapper, the attempt span takes
// gen_ai.response.model (the reported model, else the routed one) and the
// token usage from agent.EventTurnFinished.
func TestAttemptFromEvent(t *testing.T) {
	tests := []struct {
		name, reported, want string
	}{
		{"reported model", "m-2024-08-06", "m-2024-08-06"},
		{"routed model when none reported", "", "m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			defer tp.Shutdown(context.Background())
			tr := tracing.New(tp)
			a, err := agent.New(agent.Config{Provider: reporting{"m": tt.reported}, Models: fallback.Settings{Primary: "m"}, OnEvent: tr.OnEvent})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Run(t.Context(), a, []agent.Message{{Role: agent.RoleUser, Content: "hi"}}); err != nil {
				t.Fatal(err)
			}
			if got, want := tree(exp.GetSpans()), "invoke_agent\n  turn 1\n    chat m\n"; got != want {
				t.Fatalf("span tree:\n%s\nwant:\n%s", got, want)
			}
			span := find(t, exp.GetSpans(), "chat m")[0]
			if v := attr(span, tracing.ResponseModel).AsString(); v != tt.want {
				t.Errorf("response model = %q, want %q", v, tt.want)
			}
			if in, out := attr(span, tracing.InputTokens).AsInt64(), attr(span, tracing.OutputTokens).AsInt64(); in != 7 || out != 2 {
				t.Errorf("usage = %d/%d, want 7/2", in, out)
			}
		})
	}
}
