package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// probeSetup builds an agent whose tools trip at the first failure, with
// search backed by the given backups; the model calls the tools named by the
// run's first message, comma-free: one call per run via callRun.
func probeSetup(t *testing.T, ev *events, tools ...agent.Tool) (*agent.Agent, *scripted) {
	t.Helper()
	sp := newScripted()
	var backups []string
	for _, tl := range tools[1:] {
		backups = append(backups, tl.Name)
	}
	a := mustNew(t, agent.Config{
		Provider:    sp,
		Models:      fallback.Settings{Primary: "m"},
		Tools:       tools,
		Backups:     map[string][]string{tools[0].Name: backups},
		ToolBreaker: breakerSettings(1),
		OnEvent:     ev.add,
	})
	return a, sp
}

// callRun runs one turn of tool calls and returns what the model read.
func callRun(t *testing.T, a *agent.Agent, sp *scripted, names ...string) []string {
	t.Helper()
	sp.on("m", toolThenAnswer(names...))
	res, err := a.Run(t.Context(), user("go"))
	if err != nil {
		t.Fatal(err)
	}
	return contents(toolResults(res.Messages))
}

// A failed probe falls through once (SEMANTICS 6 rev 2): the model reads only
// the backup's result, the event names both tools, and both breakers saw
// their call.
func TestFailedProbeFallsThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		a, sp := probeSetup(t, &ev, errTool("search", "search down"), okTool("search_b", "from b"))
		equalSlices(t, "trip", callRun(t, a, sp, "search"), []string{"search down"})
		time.Sleep(breaker.DefaultRecoveryDuration) // search's probe is due; search_b is healthy
		ev = events{}
		equalSlices(t, "read", callRun(t, a, sp, "search"), []string{"from b"})
		e := ev.of(agent.EventToolCall)[0]
		equal(t, "fell through from", e.FallThrough, "search")
		equal(t, "resolved", e.ResolvedTool, "search_b")
		equal(t, "outcome", e.Outcome, agent.OutcomeOK)
		equal(t, "search failures", a.Tools().Stats("search").Failures, 2)
		equal(t, "search state", a.Tools().Breaker("search").State(), breaker.Open)
		equal(t, "search_b successes", a.Tools().Stats("search_b").Successes, 1)
	})
}

// At most one fall-through per call: when the second candidate is a probe
// that fails too, its failure is the result, and the third is not tried.
func TestFallThroughAtMostOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		a, sp := probeSetup(t, &ev, errTool("search", "search down"), errTool("b1", "b1 down"), okTool("b2", "from b2"))
		sp.on("m", toolThenAnswer("search", "b1"))
		callRun(t, a, sp, "search", "b1") // both trip
		time.Sleep(breaker.DefaultRecoveryDuration)
		ev = events{}
		equalSlices(t, "read", callRun(t, a, sp, "search"), []string{"b1 down"})
		e := ev.of(agent.EventToolCall)[0]
		equal(t, "fell through from", e.FallThrough, "search")
		equal(t, "resolved", e.ResolvedTool, "b1")
		equal(t, "outcome", e.Outcome, agent.OutcomeError)
		equal(t, "b2 calls", a.Tools().Stats("b2").Calls, 0)
	})
}

// A tool marked NotIdempotent never falls through: its failed probe is the
// result, and the backup is not called.
func TestNotIdempotentNeverFallsThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		book := errTool("book", "booking failed")
		book.NotIdempotent = true
		a, sp := probeSetup(t, &ev, book, okTool("book_b", "booked by b"))
		callRun(t, a, sp, "book")
		time.Sleep(breaker.DefaultRecoveryDuration)
		ev = events{}
		equalSlices(t, "read", callRun(t, a, sp, "book"), []string{"booking failed"})
		e := ev.of(agent.EventToolCall)[0]
		equal(t, "fell through from", e.FallThrough, "")
		equal(t, "resolved", e.ResolvedTool, "book")
		equal(t, "book_b calls", a.Tools().Stats("book_b").Calls, 0)
	})
}

// A probe the caller cancels carries no verdict and never falls through.
func TestCancelledProbeDoesNotFallThrough(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		fail := true
		var cancel context.CancelFunc
		search := rawTool("search", func(ctx context.Context, _ json.RawMessage) (string, error) {
			if fail {
				return "", errors.New("search down")
			}
			cancel()
			<-ctx.Done()
			return "", ctx.Err()
		})
		a, sp := probeSetup(t, &ev, search, okTool("search_b", "from b"))
		callRun(t, a, sp, "search")
		time.Sleep(breaker.DefaultRecoveryDuration)
		fail = false
		ev = events{}
		sp.on("m", toolThenAnswer("search"))
		ctx, c := context.WithCancel(t.Context())
		defer c()
		cancel = c
		res, err := a.Run(ctx, user("go"))
		if !errors.Is(err, agent.ErrCanceled) {
			t.Fatalf("err = %v, want ErrCanceled", err)
		}
		equalSlices(t, "read", contents(toolResults(res.Messages)), []string{"tool 'search' was cancelled"})
		e := ev.of(agent.EventToolCall)[0]
		equal(t, "fell through from", e.FallThrough, "")
		equal(t, "search_b calls", a.Tools().Stats("search_b").Calls, 0)
		equal(t, "search state", a.Tools().Breaker("search").State(), breaker.HalfOpen) // slot freed, no verdict
		equal(t, "search failures", a.Tools().Stats("search").Failures, 1)
	})
}

// A tool probe runs under its lease (ProbeTimeout 5s) even though the tool's
// own timeout is a minute: cut at the lease end, it is a failure dated there,
// and the call falls through to the backup at that moment.
func TestToolProbeBoundedByLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		hang := false
		search := rawTool("search", func(ctx context.Context, _ json.RawMessage) (string, error) {
			if !hang {
				return "", errors.New("search down")
			}
			<-ctx.Done()
			return "", ctx.Err()
		})
		search.Timeout = time.Minute
		sp := newScripted()
		a := mustNew(t, agent.Config{
			Provider:    sp,
			Models:      fallback.Settings{Primary: "m"},
			Tools:       []agent.Tool{search, okTool("search_b", "from b")},
			Backups:     map[string][]string{"search": {"search_b"}},
			ToolBreaker: breaker.Settings{FailureThreshold: 1, ProbeTimeout: 5 * time.Second},
			OnEvent:     ev.add,
		})
		callRun(t, a, sp, "search")
		time.Sleep(breaker.DefaultRecoveryDuration)
		hang = true
		ev = events{}
		probeStart := time.Now()
		equalSlices(t, "read", callRun(t, a, sp, "search"), []string{"from b"})
		e := ev.of(agent.EventToolCall)[0]
		equal(t, "fell through from", e.FallThrough, "search")
		equal(t, "call duration", e.Duration, 5*time.Second)
		s := a.Tools().Breaker("search").Snapshot()
		equal(t, "search state", s.State, breaker.Open)
		equal(t, "last failure at the lease end", s.LastFailure.Equal(probeStart.Add(5*time.Second)), true)

		// Without a backup, the model reads the cut as a timeout after the lease.
		b := mustNew(t, agent.Config{
			Provider:    sp,
			Models:      fallback.Settings{Primary: "m"},
			Tools:       []agent.Tool{search},
			ToolBreaker: breaker.Settings{FailureThreshold: 1, ProbeTimeout: 5 * time.Second},
		})
		hang = false
		callRun(t, b, sp, "search")
		time.Sleep(breaker.DefaultRecoveryDuration)
		hang = true
		equalSlices(t, "read", callRun(t, b, sp, "search"), []string{"tool 'search' timed out after 5s"})
	})
}

// The model breaker's probe turn runs under its lease (ProbeTimeout 10s): a
// primary that hangs is cut at the lease end, which is a failure, and the turn
// moves on to the chain. Real OpenAI adapter, fake time.
func TestModelProbeBoundedByLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := false
		h := llmtest.NewOpenAIHandler(llmtest.ByModel(map[string]llmtest.Script{
			"primary": func(llmtest.Request) llmtest.Reply {
				if hang {
					return llmtest.Hang()
				}
				return llmtest.Error(500)
			},
			"backup": llmtest.Always(llmtest.Text("from backup")),
		}))
		a := mustNew(t, agent.Config{
			Provider: memOpenAI(t, h),
			Models: fallback.Settings{Primary: "primary", Chain: []string{"backup"},
				TripThreshold: 1, ProbeTimeout: 10 * time.Second},
			Retry: noRetry,
		})
		if _, err := a.Run(t.Context(), user("trip")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(fallback.DefaultRecoveryTimeout)
		hang = true
		res, err := a.Run(t.Context(), user("probe"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "answer", res.Answer, "from backup")
		probe := res.Attempts[0]
		equal(t, "probe", probe.Probe, true)
		equal(t, "probe duration", probe.Duration, 10*time.Second)
		equal(t, "cut is a deadline", errors.Is(probe.Err, context.DeadlineExceeded), true)
		equal(t, "state", a.Models().State(), fallback.Fallback) // the cut probe re-tripped
		equal(t, "second attempt", res.Attempts[1].Model, "backup")
		h.Release()
	})
}
