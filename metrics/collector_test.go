package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/retry"
)

// outageProvider: "gpt-a" answers 503 to every request; "gpt-b" answers a 429
// once, then asks for the tool "search", then answers text.
type outageProvider struct{ b int }

func (p *outageProvider) Complete(_ context.Context, req agent.Request) (agent.Response, error) {
	if req.Model == "gpt-a" {
		return agent.Response{}, &retry.StatusError{Code: 503, Err: errors.New("unavailable")}
	}
	p.b++
	switch p.b {
	case 1:
		return agent.Response{}, &retry.StatusError{Code: 429, Err: errors.New("slow down")}
	case 2:
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant,
			ToolCalls: []agent.ToolCall{{ID: "1", Name: "search", Arguments: json.RawMessage(`{}`)}}}}, nil
	}
	return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "ok"}}, nil
}

func TestAgentMetrics(t *testing.T) {
	now := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := metrics.NewCollector()
	a, err := agent.New(agent.Config{
		Provider:    &outageProvider{},
		Models:      fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"}, Now: clock},
		ToolBreaker: breaker.Settings{FailureThreshold: 1, Now: clock},
		Retry:       retry.Policy{MaxRetries: 1, BaseDelay: time.Nanosecond, RateLimitDelay: time.Nanosecond},
		Tools: []agent.Tool{{Name: "search", Func: func(context.Context, json.RawMessage) (string, error) {
			return "", errors.New("index offline")
		}}},
		OnEvent: c.AgentEvents("gpt-a"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddAgent("gpt-a", a); err != nil {
		t.Fatal(err)
	}
	if err := c.AddAgent("gpt-a", a); !errors.Is(err, metrics.ErrDuplicate) {
		t.Fatalf("second AddAgent: err = %v, want ErrDuplicate", err)
	}
	if _, err := a.Run(t.Context(), []agent.Message{{Role: agent.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}

	// Three attempts on gpt-a (two requests each: one transient retry) trip
	// the model breaker; gpt-b is rate-limited once, then asks for search,
	// which fails and opens its breaker; then gpt-b answers.
	want := `
# HELP loopctl_breaker_state Current state of a breaker, one-hot: 1 for the current state, 0 for the others.
# TYPE loopctl_breaker_state gauge
loopctl_breaker_state{breaker="gpt-a",kind="model",state="fallback"} 1
loopctl_breaker_state{breaker="gpt-a",kind="model",state="primary"} 0
loopctl_breaker_state{breaker="gpt-a",kind="model",state="recovering"} 0
loopctl_breaker_state{breaker="search",kind="tool",state="closed"} 0
loopctl_breaker_state{breaker="search",kind="tool",state="half-open"} 0
loopctl_breaker_state{breaker="search",kind="tool",state="open"} 1
# HELP loopctl_breaker_transitions_total State transitions of a breaker (a model breaker's chain advance counts as fallback to fallback).
# TYPE loopctl_breaker_transitions_total counter
loopctl_breaker_transitions_total{breaker="gpt-a",from="primary",kind="model",to="fallback"} 1
loopctl_breaker_transitions_total{breaker="search",from="closed",kind="tool",to="open"} 1
# HELP loopctl_calls_total Calls through a breaker (tool calls, model turn attempts) by outcome.
# TYPE loopctl_calls_total counter
loopctl_calls_total{breaker="gpt-a",kind="model",outcome="failure"} 3
loopctl_calls_total{breaker="gpt-a",kind="model",outcome="success"} 2
loopctl_calls_total{breaker="search",kind="tool",outcome="failure"} 1
# HELP loopctl_retries_total Retries by the retry ladder under a breaker, by reason.
# TYPE loopctl_retries_total counter
loopctl_retries_total{breaker="gpt-a",kind="model",reason="rate_limit"} 1
loopctl_retries_total{breaker="gpt-a",kind="model",reason="transient"} 3
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	lintClean(t, c)
}

func lintClean(t *testing.T, c prometheus.Collector) {
	t.Helper()
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestGatewayAndProxySources wires the collector as the gateway (one manager
// per model, its OnTransition) and the MCP proxy (a registry, its
// OnStateChange) do, and checks that a scrape is a pure read: an open tool
// breaker whose cooldown has passed still grants its probe to the next caller.
func TestGatewayAndProxySources(t *testing.T) {
	now := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := metrics.NewCollector()
	m, err := fallback.New(fallback.Settings{Primary: "demo", Chain: []string{"backup"}, TripThreshold: 1,
		RecoveryTimeout: time.Minute, Now: clock, OnTransition: c.ModelTransitions("demo")})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddManager("demo", m); err != nil {
		t.Fatal(err)
	}
	r, err := health.NewRegistry(breaker.Settings{FailureThreshold: 1, RecoveryDuration: time.Second, Now: clock,
		OnStateChange: c.ToolTransitions})
	if err != nil {
		t.Fatal(err)
	}
	c.AddRegistry(r)
	c.AddRegistry(r) // idempotent

	turn, _ := m.Begin()
	turn.Failure(fallback.Transient)
	c.CountCall("demo", metrics.Model, metrics.Failure)
	p, _ := r.Allow("fs/read")
	p.Failure()
	c.CountCall("fs/read", metrics.Tool, metrics.Failure)
	if _, err := r.Allow("fs/read"); err != nil {
		c.CountCall("fs/read", metrics.Tool, metrics.Refused)
	}
	c.RetryHook("demo", metrics.Model)(retry.Attempt{Number: 1, Err: &retry.StatusError{Code: 429}})

	now = now.Add(2 * time.Second) // the tool's cooldown has passed
	for range 3 {                  // scrapes are pure reads
		if _, err := testutil.GatherAndCount(registryOf(t, c)); err != nil {
			t.Fatal(err)
		}
	}
	probe, err := r.Allow("fs/read")
	if err != nil || !probe.IsProbe() {
		t.Fatalf("after scrapes: Allow = %v, %v; want the probe", probe.IsProbe(), err)
	}
	probe.Success()

	want := `
# HELP loopctl_breaker_state Current state of a breaker, one-hot: 1 for the current state, 0 for the others.
# TYPE loopctl_breaker_state gauge
loopctl_breaker_state{breaker="demo",kind="model",state="fallback"} 1
loopctl_breaker_state{breaker="demo",kind="model",state="primary"} 0
loopctl_breaker_state{breaker="demo",kind="model",state="recovering"} 0
loopctl_breaker_state{breaker="fs/read",kind="tool",state="closed"} 1
loopctl_breaker_state{breaker="fs/read",kind="tool",state="half-open"} 0
loopctl_breaker_state{breaker="fs/read",kind="tool",state="open"} 0
# HELP loopctl_breaker_transitions_total State transitions of a breaker (a model breaker's chain advance counts as fallback to fallback).
# TYPE loopctl_breaker_transitions_total counter
loopctl_breaker_transitions_total{breaker="demo",from="primary",kind="model",to="fallback"} 1
loopctl_breaker_transitions_total{breaker="fs/read",from="closed",kind="tool",to="open"} 1
loopctl_breaker_transitions_total{breaker="fs/read",from="half-open",kind="tool",to="closed"} 1
loopctl_breaker_transitions_total{breaker="fs/read",from="open",kind="tool",to="half-open"} 1
# HELP loopctl_calls_total Calls through a breaker (tool calls, model turn attempts) by outcome.
# TYPE loopctl_calls_total counter
loopctl_calls_total{breaker="demo",kind="model",outcome="failure"} 1
loopctl_calls_total{breaker="fs/read",kind="tool",outcome="failure"} 1
loopctl_calls_total{breaker="fs/read",kind="tool",outcome="refused"} 1
# HELP loopctl_retries_total Retries by the retry ladder under a breaker, by reason.
# TYPE loopctl_retries_total counter
loopctl_retries_total{breaker="demo",kind="model",reason="rate_limit"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
	lintClean(t, c)

	c.RemoveManager("demo")
	if err := testutil.CollectAndCompare(c, strings.NewReader(`
# HELP loopctl_breaker_state Current state of a breaker, one-hot: 1 for the current state, 0 for the others.
# TYPE loopctl_breaker_state gauge
loopctl_breaker_state{breaker="fs/read",kind="tool",state="closed"} 1
loopctl_breaker_state{breaker="fs/read",kind="tool",state="half-open"} 0
loopctl_breaker_state{breaker="fs/read",kind="tool",state="open"} 0
`), "loopctl_breaker_state"); err != nil {
		t.Fatal(err)
	}
}

func registryOf(t *testing.T, c prometheus.Collector) *prometheus.Registry {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestAgentEventsToolOutcomes(t *testing.T) {
	c := metrics.NewCollector()
	hook := c.AgentEvents("m")
	for _, ev := range []agent.Event{
		{Kind: agent.EventToolCall, Tool: "a", ResolvedTool: "b", FallThrough: "a", Outcome: agent.OutcomeOK},
		{Kind: agent.EventToolCall, Tool: "a", Outcome: agent.OutcomeRefused},
		{Kind: agent.EventToolCall, Tool: "b", ResolvedTool: "b", Outcome: agent.OutcomePanic},
		{Kind: agent.EventToolCall, Tool: "b", ResolvedTool: "b", Outcome: agent.OutcomeTimeout},
		{Kind: agent.EventToolCall, Tool: "b", ResolvedTool: "b", Outcome: agent.OutcomeCancelled},
		{Kind: agent.EventToolCall, Tool: "zz", Outcome: agent.OutcomeUnknown},
		{Kind: agent.EventToolCall, Tool: "b", Outcome: agent.OutcomeBadArguments},
		{Kind: agent.EventTurnFinished, Model: "m", Err: context.Canceled},
		{Kind: agent.EventTurnFinished, Model: "m", Err: &retry.StatusError{Code: 400}},
		{Kind: agent.EventTurnRefused, Model: "m", Err: fallback.ErrExhausted},
	} {
		hook(ev)
	}
	want := `
# HELP loopctl_calls_total Calls through a breaker (tool calls, model turn attempts) by outcome.
# TYPE loopctl_calls_total counter
loopctl_calls_total{breaker="a",kind="tool",outcome="failure"} 1
loopctl_calls_total{breaker="a",kind="tool",outcome="refused"} 1
loopctl_calls_total{breaker="b",kind="tool",outcome="cancel"} 1
loopctl_calls_total{breaker="b",kind="tool",outcome="failure"} 2
loopctl_calls_total{breaker="b",kind="tool",outcome="success"} 1
loopctl_calls_total{breaker="m",kind="model",outcome="cancel"} 1
loopctl_calls_total{breaker="m",kind="model",outcome="failure"} 1
loopctl_calls_total{breaker="m",kind="model",outcome="refused"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "loopctl_calls_total"); err != nil {
		t.Fatal(err)
	}
}
