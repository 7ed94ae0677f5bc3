package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/retry"
)

// scripted is a fake agent.Provider: each model answers from its own function,
// and every request is recorded.
type scripted struct {
	mu       sync.Mutex
	requests []agent.Request
	models   map[string]func(ctx context.Context, n int, req agent.Request) (agent.Response, error)
}

func newScripted() *scripted {
	return &scripted{models: map[string]func(context.Context, int, agent.Request) (agent.Response, error){}}
}

// on sets model's behaviour; n is the 1-based number of the request to that model.
func (s *scripted) on(model string, f func(ctx context.Context, n int, req agent.Request) (agent.Response, error)) *scripted {
	s.models[model] = f
	return s
}

func (s *scripted) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := s.count(req.Model)
	f := s.models[req.Model]
	s.mu.Unlock()
	if f == nil {
		return agent.Response{}, fmt.Errorf("scripted: no script for model %q", req.Model)
	}
	return f(ctx, n, req)
}

func (s *scripted) count(model string) int {
	n := 0
	for _, r := range s.requests {
		if r.Model == model {
			n++
		}
	}
	return n
}

// Count returns how many requests model received.
func (s *scripted) Count(model string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count(model)
}

// Models returns the model of every request, in order.
func (s *scripted) Models() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.requests {
		out = append(out, r.Model)
	}
	return out
}

// answer is a final assistant message.
func answer(text string) (agent.Response, error) {
	return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: text},
		Usage: agent.Usage{InputTokens: 10, OutputTokens: 2}}, nil
}

// calls is an assistant message asking for tool calls; each call is "name" or
// "name:{json}". IDs are c1, c2, ...
func calls(names ...string) (agent.Response, error) {
	var tc []agent.ToolCall
	for i, n := range names {
		name, args, ok := cut(n, ':')
		if !ok {
			args = "{}"
		}
		tc = append(tc, agent.ToolCall{ID: fmt.Sprintf("c%d", i+1), Name: name, Arguments: json.RawMessage(args)})
	}
	return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, ToolCalls: tc},
		Usage: agent.Usage{InputTokens: 10, OutputTokens: 5}}, nil
}

func cut(s string, sep byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

// toolThenAnswer asks for the given calls on the first request of a run (the
// last message is not a tool result) and answers "done" otherwise.
func toolThenAnswer(names ...string) func(context.Context, int, agent.Request) (agent.Response, error) {
	return func(_ context.Context, _ int, req agent.Request) (agent.Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == agent.RoleTool {
			return answer("done")
		}
		return calls(names...)
	}
}

func always(text string) func(context.Context, int, agent.Request) (agent.Response, error) {
	return func(context.Context, int, agent.Request) (agent.Response, error) { return answer(text) }
}

func failing(code int) func(context.Context, int, agent.Request) (agent.Response, error) {
	return func(context.Context, int, agent.Request) (agent.Response, error) {
		return agent.Response{}, &retry.StatusError{Code: code, Err: fmt.Errorf("HTTP %d", code)}
	}
}

// noRetry is a ladder with no transient retries.
var noRetry = retry.Policy{MaxRetries: -1}

func user(text string) []agent.Message {
	return []agent.Message{{Role: agent.RoleUser, Content: text}}
}

// events records every event.
type events struct {
	mu  sync.Mutex
	all []agent.Event
}

func (e *events) add(ev agent.Event) {
	e.mu.Lock()
	e.all = append(e.all, ev)
	e.mu.Unlock()
}

func (e *events) of(kind agent.EventKind) []agent.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []agent.Event
	for _, ev := range e.all {
		if ev.Kind == kind {
			out = append(out, ev)
		}
	}
	return out
}

func (e *events) kinds() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []string
	for _, ev := range e.all {
		out = append(out, ev.Kind.String())
	}
	return out
}

func mustNew(t testing.TB, cfg agent.Config) *agent.Agent {
	t.Helper()
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	return a
}

// toolResults returns the tool result messages of a conversation.
func toolResults(msgs []agent.Message) []agent.Message {
	var out []agent.Message
	for _, m := range msgs {
		if m.Role == agent.RoleTool {
			out = append(out, m)
		}
	}
	return out
}

func rawTool(name string, f func(ctx context.Context, args json.RawMessage) (string, error)) agent.Tool {
	return agent.Tool{Name: name, Description: "test tool " + name, Func: f}
}

func okTool(name, out string) agent.Tool {
	return rawTool(name, func(context.Context, json.RawMessage) (string, error) { return out, nil })
}

func errTool(name, msg string) agent.Tool {
	return rawTool(name, func(context.Context, json.RawMessage) (string, error) { return "", errors.New(msg) })
}

func equal[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func equalSlices[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}
