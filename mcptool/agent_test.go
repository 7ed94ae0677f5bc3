package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
)

// startUpstream connects an Upstream to s for the test.
func startUpstream(t *testing.T, s *scripted) *Upstream {
	t.Helper()
	u, err := NewUpstream(UpstreamConfig{Name: "s", Connect: s.connect})
	if err != nil {
		t.Fatal(err)
	}
	u.Start(context.Background())
	if err := u.WaitFirst(context.Background()); err != nil || !u.Status().Up {
		t.Fatalf("upstream not up: %v %+v", err, u.Status())
	}
	t.Cleanup(func() { u.Close(); s.crash() })
	return u
}

func TestAgentToolsCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		u := startUpstream(t, s)
		tools := map[string]agent.Tool{}
		for _, tool := range AgentTools(u, AgentOptions{Tools: map[string]ToolOptions{"hang": {Timeout: time.Second}}}) {
			tools[tool.Name] = tool
		}
		if len(tools) != 8 || tools["s__echo"].Description != "Returns its text argument." ||
			string(tools["s__echo"].Parameters) != `{"type":"object"}` {
			t.Fatalf("agent tools: %+v", tools)
		}
		ctx := context.Background()
		call := func(name, args string) (string, error) { return tools[name].Func(ctx, json.RawMessage(args)) }

		if out, err := call("s__echo", `{"text":"hi"}`); out != "hi" || err != nil {
			t.Fatalf("echo: %q %v", out, err)
		}
		if out, err := call("s__toolerr", `{}`); err != nil || out != "tool 's__toolerr' returned an error: bad input: n must be positive" {
			t.Fatalf("isError result: %q %v", out, err)
		}
		if _, err := call("s__badparams", `{}`); !errors.As(err, new(*agent.ArgumentError)) {
			t.Fatalf("invalid params: %v, want an *agent.ArgumentError", err)
		}
		if _, err := call("s__protoerr", `{}`); err == nil || !strings.Contains(err.Error(), "internal boom") {
			t.Fatalf("protocol error: %v", err)
		}
		if tools["s__hang"].Timeout != time.Second || tools["s__echo"].Timeout != 0 {
			t.Fatalf("per-tool timeouts: hang %v, echo %v", tools["s__hang"].Timeout, tools["s__echo"].Timeout)
		}
		if !tools["s__echo"].NotIdempotent || tools["s__weather"].NotIdempotent {
			t.Fatalf("idempotence from annotations: echo (none) %v, weather (readOnlyHint) %v",
				tools["s__echo"].NotIdempotent, tools["s__weather"].NotIdempotent)
		}
		tctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := tools["s__hang"].Func(tctx, nil); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("hang: %v", err)
		}
		s.waitCancelled(t, "hang") // the cut reached the server

		// The server stops offering echo: the agent tool follows list_changed.
		s.srv.RemoveTools("echo")
		time.Sleep(time.Second) // past the SDK's debounce
		synctest.Wait()
		if _, err := call("s__echo", `{"text":"hi"}`); !errors.As(err, new(*agent.ArgumentError)) ||
			!strings.Contains(err.Error(), `no longer offers tool "echo"`) {
			t.Fatalf("a removed tool: %v", err)
		}

		counted := AgentTools(u, AgentOptions{NoPrefix: true, Tools: map[string]ToolOptions{"toolerr": {CountToolErrors: true}}})
		for _, tool := range counted {
			if tool.Name == "toolerr" {
				if _, err := tool.Func(ctx, nil); err == nil || err.Error() != "bad input: n must be positive" {
					t.Fatalf("counted isError result: %v", err)
				}
			}
		}
	})
}

// script is a Provider that asks for one tool call, then answers.
type script struct {
	mu    sync.Mutex
	calls []agent.ToolCall
	n     int
}

func (p *script) Complete(_ context.Context, req agent.Request) (agent.Response, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if p.n%2 == 1 { // each run: the tool calls, then the answer
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: p.calls}}, nil
	}
	return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "done"}}, nil
}

func TestAgentToolsBehindTheAgentsBreakers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		u := startUpstream(t, s)
		var events []agent.Event
		var mu sync.Mutex
		p := &script{calls: []agent.ToolCall{
			{ID: "1", Name: "s__hang", Arguments: json.RawMessage(`{}`)},
			{ID: "2", Name: "s__echo", Arguments: json.RawMessage(`{"text":"hi"}`)},
			{ID: "3", Name: "s__toolerr", Arguments: json.RawMessage(`{}`)},
		}}
		a, err := agent.New(agent.Config{
			Provider: p, Models: fallback.Settings{Primary: "m"},
			Tools:       AgentTools(u, AgentOptions{}),
			ToolTimeout: 2 * time.Second, ToolBreaker: breaker.Settings{FailureThreshold: 1},
			OnEvent: func(e agent.Event) { mu.Lock(); events = append(events, e); mu.Unlock() },
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(context.Background(), []agent.Message{{Role: agent.RoleUser, Content: "go"}})
		if err != nil || res.Answer != "done" {
			t.Fatalf("run: %v %+v", err, res)
		}
		s.waitCancelled(t, "hang") // the agent's tool timeout reached the server
		reg := a.Tools()
		if reg.Breaker("s__hang").State() != breaker.Open || reg.Stats("s__hang").Failures != 1 {
			t.Fatalf("the hung tool's breaker: %v %+v", reg.Breaker("s__hang").State(), reg.Stats("s__hang"))
		}
		for _, name := range []string{"s__echo", "s__toolerr"} {
			if reg.Breaker(name).State() != breaker.Closed || reg.Stats(name).Successes != 1 {
				t.Fatalf("%s: %v %+v", name, reg.Breaker(name).State(), reg.Stats(name))
			}
		}
		outcomes := map[string]agent.Outcome{}
		for _, e := range events {
			if e.Kind == agent.EventToolCall {
				outcomes[e.Tool] = e.Outcome
			}
		}
		if len(outcomes) != 3 || outcomes["s__hang"] != agent.OutcomeTimeout || outcomes["s__toolerr"] != agent.OutcomeOK {
			t.Fatalf("tool call outcomes: %v", outcomes)
		}
	})
}

func TestAgentToolsProbeBoundedByLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		u := startUpstream(t, s)
		durations := make(chan time.Duration, 10)
		a, err := agent.New(agent.Config{
			Provider: &script{calls: []agent.ToolCall{{ID: "1", Name: "s__hang"}}}, Models: fallback.Settings{Primary: "m"},
			Tools:       AgentTools(u, AgentOptions{}),
			ToolTimeout: 10 * time.Second,
			ToolBreaker: breaker.Settings{FailureThreshold: 1, RecoveryDuration: 5 * time.Second, ProbeTimeout: time.Second},
			OnEvent: func(e agent.Event) {
				if e.Kind == agent.EventToolCall {
					durations <- e.Duration
				}
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		run := func() time.Duration {
			a.Run(context.Background(), []agent.Message{{Role: agent.RoleUser, Content: "go"}})
			return <-durations
		}
		if d := run(); d != 10*time.Second { // the tool timeout: trips
			t.Fatalf("first call took %v, want the 10s tool timeout", d)
		}
		s.waitCancelled(t, "hang")
		time.Sleep(5 * time.Second)
		if d := run(); d != time.Second { // the probe: cut at its lease
			t.Fatalf("probe took %v, want its 1s lease", d)
		}
		s.waitCancelled(t, "hang")
	})
}

// Issue 19 item 17 through the library: while the server is down (crashed,
// its restarts refused), the agent's calls of its tools are soft errors with
// OutcomeUnavailable and no verdict: a server's restart does not trip its
// healthy tools.
func TestAgentToolsServerDownIsNoVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		u := startUpstream(t, s)
		s.refuse.Store(true)
		s.crash()
		for u.Status().Up {
			time.Sleep(time.Millisecond)
		}
		var events []agent.Event
		var mu sync.Mutex
		p := &script{calls: []agent.ToolCall{
			{ID: "1", Name: "s__echo", Arguments: json.RawMessage(`{"text":"a"}`)},
			{ID: "2", Name: "s__echo", Arguments: json.RawMessage(`{"text":"b"}`)},
			{ID: "3", Name: "s__echo", Arguments: json.RawMessage(`{"text":"c"}`)},
		}}
		a, err := agent.New(agent.Config{
			Provider: p, Models: fallback.Settings{Primary: "m"},
			Tools:       AgentTools(u, AgentOptions{}),
			ToolBreaker: breaker.Settings{FailureThreshold: 1},
			OnEvent:     func(e agent.Event) { mu.Lock(); events = append(events, e); mu.Unlock() },
		})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(context.Background(), []agent.Message{{Role: agent.RoleUser, Content: "go"}})
		if err != nil || res.Answer != "done" {
			t.Fatalf("run: %v %+v", err, res)
		}
		if st := a.Tools().Breaker("s__echo").State(); st != breaker.Closed {
			t.Fatalf("s__echo's breaker is %v after calls while its server was down, want closed", st)
		}
		n := 0
		for _, e := range events {
			if e.Kind == agent.EventToolCall {
				n++
				if e.Outcome != agent.OutcomeUnavailable {
					t.Errorf("call %s: outcome %v, want unavailable", e.CallID, e.Outcome)
				}
			}
		}
		if n != 3 {
			t.Fatalf("%d tool call events, want 3", n)
		}
	})
}
