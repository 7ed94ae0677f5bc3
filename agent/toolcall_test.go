package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
)

func breakerSettings(threshold int) breaker.Settings {
	return breaker.Settings{FailureThreshold: threshold}
}

// script makes the model call the given tool calls, one list per turn, then
// answer "done".
func script(turns ...[]string) func(context.Context, int, agent.Request) (agent.Response, error) {
	return func(_ context.Context, n int, _ agent.Request) (agent.Response, error) {
		if n <= len(turns) {
			return calls(turns[n-1]...)
		}
		return answer("done")
	}
}

func contents(msgs []agent.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

func outcomes(ev *events) []string {
	var out []string
	for _, e := range ev.of(agent.EventToolCall) {
		out = append(out, e.Outcome.String())
	}
	return out
}

// A tool that keeps failing trips its breaker, and the model then reads the
// soft refusal; refusals are not recorded as failures.
func TestFlakyToolTripsAndModelReadsRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		sp := newScripted().on("m", script([]string{"flaky"}, []string{"flaky"}, []string{"flaky"}, []string{"flaky"}))
		a := mustNew(t, agent.Config{
			Provider: sp,
			Models:   fallback.Settings{Primary: "m"},
			Tools:    []agent.Tool{errTool("flaky", "backend down")},
			OnEvent:  ev.add,
		})
		res, err := a.Run(t.Context(), user("go"))
		if err != nil {
			t.Fatal(err)
		}
		tr := toolResults(res.Messages)
		equalSlices(t, "tool results", contents(tr), []string{
			"backend down", "backend down", "backend down",
			"tool temporarily unavailable: circuit breaker open for tool 'flaky'; retry in 30s; no backup tool",
		})
		for _, m := range tr {
			if !m.IsError || m.ToolName != "flaky" {
				t.Fatalf("tool result %+v: want a soft error answering flaky", m)
			}
		}
		equalSlices(t, "outcomes", outcomes(&ev), []string{"error", "error", "error", "refused"})
		st := a.Tools().Stats("flaky")
		equal(t, "calls recorded", st.Calls, 3)
		equal(t, "failures recorded", st.Failures, 3)
		equal(t, "breaker", a.Tools().Breaker("flaky").State(), breaker.Open)
		tt := ev.of(agent.EventToolTransition)
		if len(tt) != 1 || tt[0].Tool != "flaky" || tt[0].From != breaker.Closed || tt[0].To != breaker.Open {
			t.Fatalf("tool transitions = %+v, want flaky closed>open", tt)
		}
		equal(t, "answer", res.Answer, "done")
	})
}

// The router routes by the breakers alone (rev 2): a failing tool keeps its
// calls while its breaker is closed, and its backup takes them once it trips;
// when every candidate is open the model reads a refusal that names the backup.
func TestRouterUsesBackup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		turns := make([][]string, 7)
		for i := range turns {
			turns[i] = []string{"search"}
		}
		sp := newScripted().on("m", script(turns[:4]...))
		a := mustNew(t, agent.Config{
			Provider: sp,
			Models:   fallback.Settings{Primary: "m"},
			Tools: []agent.Tool{
				errTool("search", "search down"),
				okTool("search_b", "from b"),
			},
			Backups: map[string][]string{"search": {"search_b"}},
			OnEvent: ev.add,
		})
		res, err := a.Run(t.Context(), user("find"))
		if err != nil {
			t.Fatal(err)
		}
		equalSlices(t, "results", contents(toolResults(res.Messages)),
			[]string{"search down", "search down", "search down", "from b"})
		var resolved []string
		for _, e := range ev.of(agent.EventToolCall) {
			resolved = append(resolved, e.ResolvedTool)
		}
		equalSlices(t, "resolved", resolved, []string{"search", "search", "search", "search_b"})
		for _, m := range toolResults(res.Messages) {
			equal(t, "tool name the model reads", m.ToolName, "search")
		}

		// Now both fail until both are open.
		ev = events{}
		sp = newScripted().on("m", script(turns...))
		a2 := mustNew(t, agent.Config{
			Provider: sp,
			Models:   fallback.Settings{Primary: "m"},
			Tools: []agent.Tool{
				errTool("search", "search down"),
				errTool("search_b", "b down"),
			},
			Backups: map[string][]string{"search": {"search_b"}},
			OnEvent: ev.add,
		})
		res, err = a2.Run(t.Context(), user("find"))
		if err != nil {
			t.Fatal(err)
		}
		resolved = nil
		for _, e := range ev.of(agent.EventToolCall) {
			resolved = append(resolved, e.ResolvedTool)
		}
		equalSlices(t, "resolved", resolved, []string{"search", "search", "search", "search_b", "search_b", "search_b", ""})
		got := toolResults(res.Messages)
		equal(t, "last result", got[len(got)-1].Content,
			"tool temporarily unavailable: circuit breaker open for tool 'search'; retry in 30s; backup tools: search_b (unavailable)")
	})
}

// A panicking tool and a hanging tool become soft errors with exact texts and
// count as failures; they run in parallel with a healthy tool.
func TestPanicAndTimeoutAreSoftErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		sp := newScripted().on("m", script([]string{"p", "h", "ok"}))
		a := mustNew(t, agent.Config{
			Provider: sp,
			Models:   fallback.Settings{Primary: "m"},
			Tools: []agent.Tool{
				rawTool("p", func(context.Context, json.RawMessage) (string, error) { panic("kaboom") }),
				rawTool("h", func(ctx context.Context, _ json.RawMessage) (string, error) {
					<-ctx.Done()
					return "", ctx.Err()
				}),
				okTool("ok", "fine"),
			},
			ToolTimeout: 2 * time.Second,
			OnEvent:     ev.add,
		})
		start := time.Now()
		res, err := a.Run(t.Context(), user("go"))
		if err != nil {
			t.Fatal(err)
		}
		equalSlices(t, "results", contents(toolResults(res.Messages)), []string{
			"tool 'p' panicked: kaboom", "tool 'h' timed out after 2s", "fine"})
		equal(t, "p failures", a.Tools().Stats("p").Failures, 1)
		equal(t, "h failures", a.Tools().Stats("h").Failures, 1)
		// SEMANTICS 1, rev 3: the timeout is dated at the call's start, 2s ago.
		equal(t, "h last failure after start", a.Tools().Breaker("h").Snapshot().LastFailure.Sub(start), 0)
		equal(t, "ok successes", a.Tools().Stats("ok").Successes, 1)
		var perr *agent.PanicError
		for _, e := range ev.of(agent.EventToolCall) {
			if e.Tool == "p" && !errors.As(e.Err, &perr) {
				t.Fatalf("panic event error = %v, want a *PanicError", e.Err)
			}
		}
		if perr == nil || perr.Value != "kaboom" || len(perr.Stack) == 0 {
			t.Fatalf("panic error = %+v", perr)
		}
	})
}

// Unknown tools and bad arguments are soft errors that touch no breaker.
func TestUnknownToolAndBadArguments(t *testing.T) {
	type args struct {
		Q string `json:"q"`
	}
	typed, err := agent.NewTool("typed", "typed tool", func(_ context.Context, a args) (string, error) { return "q=" + a.Q, nil })
	if err != nil {
		t.Fatal(err)
	}
	sp := newScripted().on("m", script([]string{
		"nope",
		`a:{not json`,
		`a:[1]`,
		`typed:{"q":"x","z":1}`,
		`typed:{}`,
		`typed:{"q":"x"}`,
	}))
	a := mustNew(t, agent.Config{
		Provider: sp,
		Models:   fallback.Settings{Primary: "m"},
		Tools:    []agent.Tool{okTool("a", "A"), okTool("b", "B"), typed},
	})
	res, err := a.Run(t.Context(), user("go"))
	if err != nil {
		t.Fatal(err)
	}
	equalSlices(t, "results", contents(toolResults(res.Messages)), []string{
		"tool 'nope' is not available; available tools: a, b, typed",
		"invalid arguments for tool 'a': arguments are not valid JSON; send one JSON object",
		"invalid arguments for tool 'a': arguments must be a JSON object",
		`invalid arguments for tool 'typed': json: unknown field "z"`,
		"invalid arguments for tool 'typed': missing required field(s): q",
		"q=x",
	})
	equal(t, "calls recorded for a", a.Tools().Stats("a").Calls, 0)
	equal(t, "calls recorded for typed", a.Tools().Stats("typed").Calls, 1)
}

// Tools of one turn run concurrently; results come back in the model's order
// even when the tools finish in reverse order.
func TestToolsRunConcurrentlyResultsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 3
		var started sync.WaitGroup
		started.Add(n)
		allStarted := make(chan struct{})
		go func() { started.Wait(); close(allStarted) }()
		done := make([]chan struct{}, n+1)
		for i := range done {
			done[i] = make(chan struct{})
		}
		close(done[n])
		names := []string{"one", "two", "three"}
		var tools []agent.Tool
		for i, name := range names {
			tools = append(tools, rawTool(name, func(ctx context.Context, _ json.RawMessage) (string, error) {
				started.Done()
				select { // every tool must be running at once
				case <-allStarted:
				case <-ctx.Done():
					return "", errors.New("not concurrent")
				}
				<-done[i+1] // finish after the next one: reverse order
				defer close(done[i])
				return name, nil
			}))
		}
		sp := newScripted().on("m", script(names))
		a := mustNew(t, agent.Config{Provider: sp, Models: fallback.Settings{Primary: "m"}, Tools: tools})
		res, err := a.Run(t.Context(), user("go"))
		if err != nil {
			t.Fatal(err)
		}
		got := toolResults(res.Messages)
		equalSlices(t, "results", contents(got), names)
		for i, m := range got {
			equal(t, "call id", m.ToolCallID, []string{"c1", "c2", "c3"}[i])
		}
	})
}

// Cancelling in the middle of parallel tool calls settles every permit as
// cancelled: the probe slot is released, nothing is recorded, the run ends
// with the cancellation, and no goroutine is left (TestMain checks).
func TestCancelDuringParallelToolCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		started := make(chan string, 2)
		hang := func(ctx context.Context, _ json.RawMessage) (string, error) {
			started <- "x"
			<-ctx.Done()
			return "", ctx.Err()
		}
		sp := newScripted().on("m", script([]string{"t", "u"}))
		a := mustNew(t, agent.Config{
			Provider: sp,
			Models:   fallback.Settings{Primary: "m"},
			Tools:    []agent.Tool{rawTool("t", hang), rawTool("u", hang)},
			OnEvent:  ev.add,
		})
		// Trip t from outside, then let the cooldown pass: the run's call is the probe.
		for range 3 {
			p, err := a.Tools().Allow("t")
			if err != nil {
				t.Fatal(err)
			}
			p.Failure()
		}
		time.Sleep(31 * time.Second)
		statsBefore := a.Tools().Stats("t")

		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-started; <-started; cancel() }()
		res, err := a.Run(ctx, user("go"))
		if !errors.Is(err, agent.ErrCanceled) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want a cancellation", err)
		}
		equalSlices(t, "outcomes", outcomes(&ev), []string{"cancelled", "cancelled"})
		equalSlices(t, "results", contents(toolResults(res.Messages)),
			[]string{"tool 't' was cancelled", "tool 'u' was cancelled"})
		if !a.Tools().WouldAllow("t") {
			t.Fatal("t's probe slot is still held after the cancellation")
		}
		snap := a.Tools().Breaker("t").Snapshot()
		if !snap.ProbeStartedAt.IsZero() {
			t.Fatalf("t snapshot = %+v, want no probe in flight", snap)
		}
		equal(t, "t stats", a.Tools().Stats("t"), statsBefore)
		equal(t, "u calls", a.Tools().Stats("u").Calls, 0)
		// The next call is granted the probe.
		p, err := a.Tools().Allow("t")
		if err != nil || !p.IsProbe() {
			t.Fatalf("Allow after the cancellation = %+v, %v; want the probe", p, err)
		}
		p.Cancel()
	})
}

// OnEvent is never called concurrently, even from parallel tool calls.
func TestOnEventSerialized(t *testing.T) {
	var inside, maxInside, count atomic.Int32
	var tools []agent.Tool
	var names []string
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		tools = append(tools, errTool(n, "fail"))
		names = append(names, n)
	}
	sp := newScripted().on("m", script(names, names, names))
	a := mustNew(t, agent.Config{
		Provider: sp,
		Models:   fallback.Settings{Primary: "m"},
		Tools:    tools,
		OnEvent: func(agent.Event) {
			v := inside.Add(1)
			for {
				m := maxInside.Load()
				if v <= m || maxInside.CompareAndSwap(m, v) {
					break
				}
			}
			count.Add(1)
			inside.Add(-1)
		},
	})
	if _, err := a.Run(t.Context(), user("go")); err != nil {
		t.Fatal(err)
	}
	equal(t, "concurrent OnEvent calls", maxInside.Load(), 1)
	// 4 turns x 2 turn events + 24 tool calls + 8 tool transitions.
	equal(t, "events", count.Load(), 4*2+24+8)
}

// A tool still running when the caller's deadline passes is a failure for its
// breaker (SEMANTICS 1, "Decision (cancel)": a deadline is not a cancellation),
// and the run ends with the deadline.
func TestCallerDeadlineDuringToolCallIsAFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := newScripted().on("m", script([]string{"h"}))
		a := mustNew(t, agent.Config{
			Provider: sp,
			Models:   fallback.Settings{Primary: "m"},
			Tools: []agent.Tool{rawTool("h", func(ctx context.Context, _ json.RawMessage) (string, error) {
				<-ctx.Done()
				return "", ctx.Err()
			})},
			ToolTimeout: time.Minute,
		})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		start := time.Now()
		res, err := a.Run(ctx, user("go"))
		if !errors.Is(err, agent.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrCanceled and DeadlineExceeded", err)
		}
		equalSlices(t, "results", contents(toolResults(res.Messages)), []string{"tool 'h' timed out after 5s"})
		equal(t, "h failures", a.Tools().Stats("h").Failures, 1)
		equal(t, "h consecutive failures", a.Tools().Breaker("h").Snapshot().ConsecutiveFailures, 1)
		equal(t, "h last failure after start (a timeout: its start)", a.Tools().Breaker("h").Snapshot().LastFailure.Sub(start), 0)
		equal(t, "model failures", a.Models().Snapshot().ConsecutiveFailures, 0)
	})
}
