package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

// Random histories of model faults, tool faults, cancellations and clock
// jumps, checked against the bookkeeping invariants after every run:
//   - every tool permit was settled: no breaker holds a probe slot, and each
//     tool's Stats count exactly the calls the events report as ok, error,
//     panic or timeout (refusals, bad arguments and cancellations record
//     nothing);
//   - every turn ticket was settled: a Recovering model breaker hands the next
//     turn the probe (no leaked probe ticket);
//   - a run ends with nil or a RunError for one of the documented reasons.
func TestRandomHistoriesKeepBookkeeping(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for i := range 20 {
		s := seed + uint64(i)
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { randomHistory(t, rand.New(rand.NewPCG(s, 1))) })
		})
	}
}

func randomHistory(t *testing.T, rng *rand.Rand) {
	var mu sync.Mutex // guards rng and cancel: tools draw from it concurrently
	draw := func(n int) int { mu.Lock(); defer mu.Unlock(); return rng.IntN(n) }
	var cancel context.CancelFunc
	cancelRun := func() { mu.Lock(); c := cancel; mu.Unlock(); c() }

	toolNames := []string{"t0", "t1", "t2"}
	tool := func(name string) agent.Tool {
		return rawTool(name, func(ctx context.Context, _ json.RawMessage) (string, error) {
			switch draw(8) {
			case 0:
				return "", errors.New("tool error")
			case 1:
				panic("tool panic")
			case 2:
				<-ctx.Done() // hang until the timeout or a cancellation
				return "", ctx.Err()
			case 3:
				cancelRun()
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "ok", nil
		})
	}
	model := func(ctx context.Context, _ int, req agent.Request) (agent.Response, error) {
		switch draw(10) {
		case 0:
			return failing(500)(ctx, 0, req)
		case 1:
			return agent.Response{}, &retry.StatusError{Code: 429, RetryAfter: time.Second}
		case 2:
			return failing(400)(ctx, 0, req)
		case 3:
			cancelRun()
			<-ctx.Done()
			return agent.Response{}, ctx.Err()
		case 4, 5:
			return answer("done")
		}
		var names []string
		for range 1 + draw(3) {
			n := []string{"t0", "t1", "t2", "t0", "missing"}[draw(5)]
			if draw(6) == 0 {
				n += ":{bad"
			}
			names = append(names, n)
		}
		return calls(names...)
	}
	sp := newScripted().on("a", model).on("b", model).on("c", model)
	var ev events
	a := mustNew(t, agent.Config{
		Provider:    sp,
		Models:      fallback.Settings{Primary: "a", Chain: []string{"b", "c"}},
		Tools:       []agent.Tool{tool("t0"), tool("t1"), tool("t2")},
		Backups:     map[string][]string{"t0": {"t1", "t2"}},
		Retry:       retry.Policy{MaxRetries: 1, RateLimitRetries: 1},
		ToolTimeout: 5 * time.Second,
		OnEvent:     ev.add,
	})
	for range 30 {
		ctx, c := context.WithCancel(t.Context())
		mu.Lock()
		cancel = c
		mu.Unlock()
		ev = events{}
		before := map[string]uint64{}
		for _, n := range toolNames {
			before[n] = a.Tools().Stats(n).Calls
		}
		_, err := a.Run(ctx, user("go"))
		c()
		if err != nil {
			var re *agent.RunError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want a *RunError", err)
			}
			switch {
			case errors.Is(err, agent.ErrCanceled), errors.Is(err, agent.ErrTurnFailed),
				errors.Is(err, agent.ErrMaxTurns), errors.Is(err, fallback.ErrExhausted):
			default:
				t.Fatalf("err = %v: no documented reason", err)
			}
		}
		recorded := map[string]uint64{}
		for _, e := range ev.of(agent.EventToolCall) {
			switch e.Outcome {
			case agent.OutcomeOK, agent.OutcomeError, agent.OutcomePanic, agent.OutcomeTimeout:
				recorded[e.ResolvedTool]++
			}
			if e.FallThrough != "" { // the failed probe ran too
				recorded[e.FallThrough]++
			}
		}
		for _, n := range toolNames {
			if got := a.Tools().Stats(n).Calls - before[n]; got != recorded[n] {
				t.Fatalf("tool %s: stats recorded %d calls, events report %d", n, got, recorded[n])
			}
			if s := a.Tools().Breaker(n).Snapshot(); !s.ProbeStartedAt.IsZero() {
				t.Fatalf("tool %s holds a probe slot after Run: %+v", n, s)
			}
		}
		if a.Models().State() == fallback.Recovering {
			tk, err := a.Models().Begin()
			if err != nil || !tk.IsProbe() {
				t.Fatalf("Recovering after Run, but the next turn is not the probe (%v): a ticket leaked", err)
			}
			tk.Cancel()
		}
		time.Sleep(time.Duration(draw(90)) * time.Second)
	}
}

// Many runs share one Agent concurrently.
func TestConcurrentRuns(t *testing.T) {
	sp := newScripted().on("m", toolThenAnswer("x", "y"))
	a := mustNew(t, agent.Config{
		Provider: sp,
		Models:   fallback.Settings{Primary: "m"},
		Tools:    []agent.Tool{okTool("x", "X"), okTool("y", "Y")},
		OnEvent:  func(agent.Event) {},
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				res, err := a.Run(t.Context(), user("go"))
				if err != nil || res.Answer != "done" {
					t.Errorf("Run = %v, %v", res, err)
				}
			}
		})
	}
	wg.Wait()
	equal(t, "x calls", a.Tools().Stats("x").Calls, 80)
}

// The logger gets the events at their levels.
func TestLogging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
			Level: slog.LevelDebug,
			ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey || a.Key == "duration" || a.Key == "stack" {
					return slog.Attr{}
				}
				return a
			},
		}))
		sp := newScripted().on("a", failing(500)).on("b", script([]string{"ok", "bad"}))
		a := mustNew(t, agent.Config{
			Provider: sp,
			Models:   fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1},
			Retry:    retry.Policy{MaxRetries: 1, Rand: func() float64 { return 0 }},
			Tools:    []agent.Tool{okTool("ok", "fine"), errTool("bad", "broken")},
			Logger:   logger,
		})
		if _, err := a.Run(agent.ContextWithRunID(t.Context(), "r1"), user("go")); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{
			`level=DEBUG msg="agent: turn started" run=r1 turn=1 attempt=1 model=a probe=false`,
			`level=DEBUG msg="agent: retrying request" run=r1 turn=1 model=a request=1 wait=0s error="retry: HTTP 500 Internal Server Error: HTTP 500"`,
			`level=WARN msg="agent: model breaker transition" from=primary to=fallback from_model=a to_model=b`,
			`level=WARN msg="agent: turn failed" run=r1 turn=1 attempt=1 model=a probe=false requests=2 error="retry: HTTP 500 Internal Server Error: HTTP 500"`,
			`level=INFO msg="agent: turn finished" run=r1 turn=1 attempt=2 model=b probe=false requests=1`,
			`level=DEBUG msg="agent: tool call" run=r1 turn=1 tool=ok resolved=ok outcome=ok`,
			`level=WARN msg="agent: tool call" run=r1 turn=1 tool=bad resolved=bad outcome=error text=broken`,
		} {
			if !strings.Contains(buf.String(), want+"\n") {
				t.Errorf("log lacks\n%s\nlog:\n%s", want, buf.String())
			}
		}
	})
}

// Whatever arguments the model sends, a typed tool either runs or answers an
// *ArgumentError, and the run goes on with a soft error: never a panic, never
// a breaker failure.
func FuzzToolArguments(f *testing.F) {
	for _, s := range []string{``, `{}`, `{"q":"x"}`, `{"q":1}`, `[1]`, `null`, `{"q":"x"} 1`, `{"q":"x","n":[1,2]}`, "{\"q\":\"\xff\"}"} {
		f.Add(s)
	}
	type args struct {
		Q string         `json:"q"`
		N []int          `json:"n,omitempty"`
		M map[string]any `json:"m,omitempty"`
	}
	tool, err := agent.NewTool("t", "", func(_ context.Context, a args) (string, error) { return "q=" + a.Q, nil })
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		out, err := tool.Func(context.Background(), json.RawMessage(raw))
		var ae *agent.ArgumentError
		if err != nil && !errors.As(err, &ae) {
			t.Fatalf("Func(%q) error %v is not an ArgumentError", raw, err)
		}
		if err == nil && !strings.HasPrefix(out, "q=") {
			t.Fatalf("Func(%q) = %q", raw, out)
		}
		sp := newScripted().on("m", func(_ context.Context, n int, _ agent.Request) (agent.Response, error) {
			if n == 1 {
				return agent.Response{Message: agent.Message{Role: agent.RoleAssistant,
					ToolCalls: []agent.ToolCall{{ID: "1", Name: "t", Arguments: json.RawMessage(raw)}}}}, nil
			}
			return answer("done")
		})
		a, err := agent.New(agent.Config{Provider: sp, Models: fallback.Settings{Primary: "m"}, Tools: []agent.Tool{tool}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Run(context.Background(), user("go"))
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		equal(t, "failures recorded", a.Tools().Stats("t").Failures, 0)
		if r := toolResults(res.Messages)[0]; r.IsError && !strings.HasPrefix(r.Content, "invalid arguments for tool 't': ") {
			t.Fatalf("soft error %q", r.Content)
		}
	})
}

// Random serial histories of tool outcomes (ok, error, hang) and clock jumps
// through the router, the tool breakers, lease-bounded probes and the probe
// fall-through, checked call by call against the reference model in
// reference_test.go: the tool that ran, the one fallen through from, the text
// the model read, the call's duration (a hanging probe is cut at its lease, a
// hanging call at the tool's timeout), and every breaker's state and last
// failure after each run.
func TestRandomProbeHistoriesMatchReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for i := range 30 {
		s := seed + uint64(i)
		t.Run(fmt.Sprint(s), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { probeHistory(t, rand.New(rand.NewPCG(s, 2))) })
		})
	}
}

func probeHistory(t *testing.T, rng *rand.Rand) {
	p := refParams{threshold: 2, cooldown: 30 * time.Second, lease: 5 * time.Second, timeout: 20 * time.Second}
	names := []string{"t0", "t1", "t2"}
	ref := &refAgent{p: p, tools: map[string]*refBreaker{}, candidates: names,
		notIdempotent: map[string]bool{"t0": rng.IntN(2) == 0}}
	var queue []refBehaviour // the behaviours of the coming invocations, in order
	var tools []agent.Tool
	for _, n := range names {
		ref.tools[n] = &refBreaker{}
		tl := rawTool(n, func(ctx context.Context, _ json.RawMessage) (string, error) {
			do := queue[0]
			queue = queue[1:]
			switch do {
			case "error":
				return "", errors.New(n + " down")
			case "hang":
				<-ctx.Done()
				return "", ctx.Err()
			}
			return "ok from " + n, nil
		})
		tl.NotIdempotent = ref.notIdempotent[n]
		tools = append(tools, tl)
	}
	var ev events
	a := mustNew(t, agent.Config{
		Provider:    newScripted().on("m", toolThenAnswer("t0")),
		Models:      fallback.Settings{Primary: "m"},
		Tools:       tools,
		Backups:     map[string][]string{"t0": {"t1", "t2"}},
		ToolBreaker: breaker.Settings{FailureThreshold: p.threshold, RecoveryDuration: p.cooldown, ProbeTimeout: p.lease},
		ToolTimeout: p.timeout,
		OnEvent:     ev.add,
	})
	for run := range 40 {
		queue = queue[:0]
		for range 2 {
			queue = append(queue, []refBehaviour{"ok", "ok", "error", "error", "hang"}[rng.IntN(5)])
		}
		planned := slices.Clone(queue)
		i := 0
		want := ref.call(time.Now(), func() refBehaviour { i++; return planned[i-1] })
		ev = events{}
		res, err := a.Run(t.Context(), user("go"))
		if err != nil {
			t.Fatal(err)
		}
		got := ev.of(agent.EventToolCall)[0]
		read := toolResults(res.Messages)[0].Content
		if want.read == "refused" {
			if got.Outcome != agent.OutcomeRefused {
				t.Fatalf("run %d (%v): %+v, want a refusal", run, planned, got)
			}
		} else if got.ResolvedTool != want.resolved || got.FallThrough != want.fallThrough ||
			read != want.read || got.Duration != want.duration {
			t.Fatalf("run %d (%v): ran %q after %q, read %q in %v; reference: %q after %q, %q in %v",
				run, planned, got.ResolvedTool, got.FallThrough, read, got.Duration,
				want.resolved, want.fallThrough, want.read, want.duration)
		}
		equal(t, "behaviours used", len(planned)-len(queue), want.consumed)
		for _, n := range names {
			s, r := a.Tools().Breaker(n).Snapshot(), ref.tools[n]
			if s.State != r.state || (r.state == breaker.Open && !s.LastFailure.Equal(r.lastFailure)) {
				t.Fatalf("run %d: %s is %v (last failure %v), reference %v (%v)",
					run, n, s.State, s.LastFailure, r.state, r.lastFailure)
			}
		}
		time.Sleep([]time.Duration{0, time.Second, 10 * time.Second, 25 * time.Second, 30 * time.Second, 31 * time.Second}[rng.IntN(6)])
	}
}
