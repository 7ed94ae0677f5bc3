package metrics_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/provider/openai"
)

// A gateway-style wiring: one model breaker, its transitions counted, its
// state read at scrape time.
func Example() {
	c := metrics.NewCollector()
	m, _ := fallback.New(fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"}, TripThreshold: 1,
		OnTransition: c.ModelTransitions("demo")})
	_ = c.AddManager("demo", m)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)

	turn, _ := m.Begin()
	turn.Failure(fallback.Transient) // trips: primary -> fallback
	c.CountCall("demo", metrics.Model, metrics.Failure)

	printNonZero(reg, "loopctl_")
	// Output:
	// loopctl_breaker_state{breaker="demo",kind="model",state="fallback"} 1
	// loopctl_breaker_transitions_total{breaker="demo",from="primary",kind="model",to="fallback"} 1
	// loopctl_calls_total{breaker="demo",kind="model",outcome="failure"} 1
}

// printNonZero prints every sample of g whose name starts with prefix and
// whose value is not zero, one a line, in the exposition format's order.
func printNonZero(g prometheus.Gatherer, prefix string) {
	families, _ := g.Gather()
	for _, f := range families {
		if !strings.HasPrefix(f.GetName(), prefix) {
			continue
		}
		for _, s := range f.GetMetric() {
			v := s.GetGauge().GetValue() + s.GetCounter().GetValue()
			if v == 0 {
				continue
			}
			fmt.Print(f.GetName(), "{")
			for i, l := range s.GetLabel() {
				if i > 0 {
					fmt.Print(",")
				}
				fmt.Printf("%s=%q", l.GetName(), l.GetValue())
			}
			fmt.Println("}", v)
		}
	}
}

// An agent's metrics, as the observability guide (docs/observability.md)
// wires them: counters from its events, state gauges read at scrape time.
func ExampleCollector_AddAgent() {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("hello")))
	defer srv.Close()
	defer srv.CloseClientConnections()
	p, _ := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	cfg := agent.Config{Provider: p, Models: fallback.Settings{Primary: "gpt-4o"}}

	c := metrics.NewCollector()
	cfg.OnEvent = c.AgentEvents("gpt-4o") // counters
	a, _ := agent.New(cfg)
	c.AddAgent("gpt-4o", a) // state gauges: the model breaker and every tool
	prometheus.MustRegister(c)
	// A gateway: c.AddManager(name, m) with Settings.OnTransition = c.ModelTransitions(name).
	// An MCP proxy: c.AddRegistry(r) with breaker.Settings.OnStateChange = c.ToolTransitions.
	defer prometheus.Unregister(c)

	a.Run(context.Background(), []agent.Message{{Role: agent.RoleUser, Content: "hi"}})
	printNonZero(prometheus.DefaultGatherer, "loopctl_")
	// Output:
	// loopctl_breaker_state{breaker="gpt-4o",kind="model",state="primary"} 1
	// loopctl_calls_total{breaker="gpt-4o",kind="model",outcome="success"} 1
}
