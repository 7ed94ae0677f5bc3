package tracing_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/openai"
	"github.com/loopctl/loopctl-go/tracing"
)

// An agent traced as the observability guide (docs/observability.md) wires
// it, with the global tracer provider (here one that records the spans).
func Example() {
	recorder := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)))
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("hello")))
	defer srv.Close()
	defer srv.CloseClientConnections()
	p, _ := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	cfg := agent.Config{Models: fallback.Settings{Primary: "gpt-4o"}}
	ctx, msgs := context.Background(), []agent.Message{{Role: agent.RoleUser, Content: "hi"}}

	tr := tracing.New(otel.GetTracerProvider())
	cfg.OnEvent = tr.OnEvent
	cfg.Provider = tr.Provider(p) // optional: request spans and token usage
	a, _ := agent.New(cfg)
	res, err := tr.Run(ctx, a, msgs)

	fmt.Println(res.Answer, err)
	for _, s := range recorder.Ended() {
		fmt.Println(s.Name())
	}
	// Output:
	// hello <nil>
	// request gpt-4o
	// chat gpt-4o
	// turn 1
	// invoke_agent
}
