package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

// The ladder runs inside the model breaker's turn: 500s absorbed by retries
// are one successful turn for the breaker, and events come in gate, retry,
// verdict, tools order.
func TestCompositionOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		sp := newScripted().on("a", func(ctx context.Context, n int, req agent.Request) (agent.Response, error) {
			if n <= 2 {
				return failing(500)(ctx, n, req)
			}
			return toolThenAnswer("echo")(ctx, n, req)
		})
		a := mustNew(t, agent.Config{
			Provider: sp,
			Models:   fallback.Settings{Primary: "a", Chain: []string{"b"}},
			Retry:    retry.Policy{Rand: func() float64 { return 0.5 }},
			Tools:    []agent.Tool{okTool("echo", "hello")},
			OnEvent:  ev.add,
		})
		res, err := a.Run(t.Context(), user("hi"))
		if err != nil {
			t.Fatal(err)
		}
		equalSlices(t, "event kinds", ev.kinds(), []string{
			"turn-started", "retry", "retry", "turn-finished", "tool-call", "turn-started", "turn-finished"})
		equal(t, "answer", res.Answer, "done")
		equal(t, "turns", res.Turns, 2)
		equal(t, "first attempt's requests", res.Attempts[0].Requests, 3)
		equal(t, "model breaker failures", a.Models().Snapshot().ConsecutiveFailures, 0)
		equal(t, "model breaker state", a.Models().State(), fallback.Primary)
		equalSlices(t, "requested models", sp.Models(), []string{"a", "a", "a", "a"})
		// The second turn carries the tool result, and every request the tool specs.
		last := sp.requests[3]
		equal(t, "tools offered", len(last.Tools), 1)
		equal(t, "tool result", last.Messages[len(last.Messages)-1].Content, "hello")
		equal(t, "usage", res.Usage, agent.Usage{InputTokens: 20, OutputTokens: 7})
		equal(t, "messages", len(res.Messages), 4) // user, assistant(calls), tool, assistant
	})
}

// FallbackExhausted ends a run before any request reaches a model, and the
// breaker state outlives the failed run.
func TestFallbackExhaustedBeforeAnyRequest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := newScripted().on("a", failing(500)).on("b", failing(503))
		a := mustNew(t, agent.Config{
			Provider:     sp,
			Models:       fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1, MaxFailCount: 1},
			Retry:        noRetry,
			TurnAttempts: 5,
		})
		res, err := a.Run(t.Context(), user("hi"))
		if !errors.Is(err, fallback.ErrExhausted) {
			t.Fatalf("first run: err = %v, want FallbackExhausted", err)
		}
		var se *retry.StatusError
		if !errors.As(err, &se) || se.Code != 503 {
			t.Fatalf("first run: err = %v, want it to wrap the last (503) error", err)
		}
		equalSlices(t, "requests", sp.Models(), []string{"a", "b"})
		equal(t, "attempts", len(res.Attempts), 2)

		res, err = a.Run(t.Context(), user("again"))
		if !errors.Is(err, fallback.ErrExhausted) {
			t.Fatalf("second run: err = %v, want FallbackExhausted", err)
		}
		equal(t, "requests after the second run", len(sp.Models()), 2)
		equal(t, "second run's attempts", len(res.Attempts), 0)
		equal(t, "second run's turns", res.Turns, 1)
	})
}

// An escalated rate limit is a RateLimit failure: a probe turn that escalates
// re-trips at once (the turn goes on to the chain, after one request: rev 3,
// the backup is usable), while a transient probe failure below the threshold
// keeps the breaker Recovering; either way the turn falls through to the
// chain (one probe per turn, rev 3; rev 2 probed the primary twice).
func TestEscalationRecordedAsRateLimit(t *testing.T) {
	for _, tc := range []struct {
		code   int
		models []string // models of the second run's attempts
	}{
		{429, []string{"a", "b"}},
		{500, []string{"a", "b"}},
	} {
		t.Run(statusName(tc.code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var ev events
				sp := newScripted().on("a", failing(500)).on("b", always("from b"))
				a := mustNew(t, agent.Config{
					Provider:     sp,
					Models:       fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 2},
					Retry:        retry.Policy{MaxRetries: -1},
					TurnAttempts: 2,
					OnEvent:      ev.add,
				})
				// Trip: two failed attempts on a; the budget of 2 is spent.
				if _, err := a.Run(t.Context(), user("hi")); !errors.Is(err, agent.ErrTurnFailed) {
					t.Fatalf("first run: %v", err)
				}
				equal(t, "state", a.Models().State(), fallback.Fallback)
				time.Sleep(61 * time.Second) // fake time: the cooldown passes
				sp.on("a", failing(tc.code))
				res, err := a.Run(t.Context(), user("again"))
				var got []string
				for _, r := range res.Attempts {
					got = append(got, r.Model)
				}
				equalSlices(t, "attempt models", got, tc.models)
				if err != nil {
					t.Fatal(err)
				}
				if tc.code == 429 {
					if !errors.Is(res.Attempts[0].Err, retry.ErrRateLimitEscalation) {
						t.Fatalf("probe error = %v, want an escalation", res.Attempts[0].Err)
					}
					equal(t, "probe requests", res.Attempts[0].Requests, 1)
					tr := ev.of(agent.EventModelTransition)
					last := tr[len(tr)-1].Transition
					equal(t, "last transition", last.From.String()+">"+last.To.String(), "recovering>fallback")
				} else {
					equal(t, "state", a.Models().State(), fallback.Recovering) // one transient probe failure: probation goes on
				}
			})
		})
	}
}

func statusName(code int) string {
	switch code {
	case 429:
		return "429 rate limited"
	default:
		return "500 transient"
	}
}

// A permanent error (here 401: a failure of that model, SEMANTICS 4) is never
// repeated on the same model within a turn.
func TestPermanentErrorNotRepeatedOnSameModel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		trip   int
		models []string
		ok     bool
	}{
		{"breaker routes back to the same model", 3, []string{"a"}, false},
		{"breaker trips and the chain serves", 1, []string{"a", "b"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sp := newScripted().on("a", failing(401)).on("b", always("from b"))
				a := mustNew(t, agent.Config{
					Provider: sp,
					Models:   fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: tc.trip},
				})
				res, err := a.Run(t.Context(), user("hi"))
				equalSlices(t, "requests", sp.Models(), tc.models)
				if tc.ok {
					if err != nil {
						t.Fatal(err)
					}
					equal(t, "answer", res.Answer, "from b")
					return
				}
				var se *retry.StatusError
				if !errors.Is(err, agent.ErrTurnFailed) || !errors.As(err, &se) || se.Code != 401 {
					t.Fatalf("err = %v, want ErrTurnFailed wrapping the 401", err)
				}
				equal(t, "failures on a", a.Models().Snapshot().ConsecutiveFailures, 1)
				// The ticket routed back to a was cancelled, not counted; the model
				// breaker is not wedged: the next run routes to a again.
				if _, err := a.Run(t.Context(), user("again")); !errors.Is(err, agent.ErrTurnFailed) {
					t.Fatal(err)
				}
				equal(t, "failures on a", a.Models().Snapshot().ConsecutiveFailures, 2)
			})
		})
	}
}

// A turn is tried at most TurnAttempts times.
func TestTurnBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := newScripted().on("a", failing(502))
		a := mustNew(t, agent.Config{
			Provider:     sp,
			Models:       fallback.Settings{Primary: "a", TripThreshold: 10},
			Retry:        noRetry,
			TurnAttempts: 3,
		})
		res, err := a.Run(t.Context(), user("hi"))
		if !errors.Is(err, agent.ErrTurnFailed) {
			t.Fatalf("err = %v, want ErrTurnFailed", err)
		}
		var re *agent.RunError
		if !errors.As(err, &re) || re.Turn != 1 || re.Model != "a" {
			t.Fatalf("err = %#v, want a RunError for turn 1 on a", err)
		}
		equal(t, "requests", len(sp.Models()), 3)
		for i, r := range res.Attempts {
			equal(t, "attempt number", r.Attempt, i+1)
		}
		equal(t, "breaker failures", a.Models().Snapshot().ConsecutiveFailures, 3)
	})
}

// Cancelling the caller's context ends the run at once, settles the open
// ticket as cancelled (no verdict), and frees a probe ticket.
func TestCancellationSettlesTicket(t *testing.T) {
	for _, tc := range []struct {
		name  string
		probe bool
		hang  bool // the provider hangs; else it fails and the ladder waits
	}{
		{"during a request", false, true},
		{"during a retry wait", false, false},
		{"during a probe turn", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				started := make(chan struct{}, 8)
				var mode string // "fail" before the test's cancellation scenario starts
				sp := newScripted().on("b", always("from b"))
				sp.on("a", func(ctx context.Context, n int, req agent.Request) (agent.Response, error) {
					if mode == "fail" {
						return failing(500)(ctx, n, req)
					}
					started <- struct{}{}
					if tc.hang {
						<-ctx.Done()
						return agent.Response{}, ctx.Err()
					}
					return failing(500)(ctx, n, req)
				})
				a := mustNew(t, agent.Config{
					Provider: sp,
					Models:   fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1},
					Retry:    retry.Policy{BaseDelay: time.Hour, MaxDelay: time.Hour, Rand: func() float64 { return 0.5 }},
				})
				if tc.probe {
					mode = "fail"
					if _, err := a.Run(t.Context(), user("trip")); err != nil {
						t.Fatal(err) // a trips, b serves
					}
					time.Sleep(time.Minute) // the cooldown passes
					mode = ""
				}
				before := a.Models().Snapshot()
				ctx, cancel := context.WithCancel(t.Context())
				go func() { <-started; cancel() }()
				start := time.Now()
				res, err := a.Run(ctx, user("hi"))
				if !errors.Is(err, agent.ErrCanceled) || !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want ErrCanceled and context.Canceled", err)
				}
				equal(t, "time the run took (fake clock)", time.Since(start), 0)
				equal(t, "attempts", len(res.Attempts), 1)
				after := a.Models().Snapshot()
				if tc.probe {
					equal(t, "state", after.State, fallback.Recovering)
					equal(t, "probe successes", after.ProbeSuccesses, 0)
					equal(t, "failures", after.ConsecutiveFailures, 0)
					// The probe slot is free: the next turn probes the primary again.
					sp.on("a", always("recovered"))
					res, err := a.Run(t.Context(), user("again"))
					if err != nil {
						t.Fatal(err)
					}
					if !res.Attempts[0].Probe || res.Attempts[0].Model != "a" {
						t.Fatalf("next attempt = %+v, want a probe of a", res.Attempts[0])
					}
					return
				}
				equal(t, "breaker failures", after.ConsecutiveFailures, before.ConsecutiveFailures)
				equal(t, "state", after.State, before.State)
			})
		})
	}
}

// A run that keeps asking for tools ends after MaxTurns turns.
func TestMaxTurns(t *testing.T) {
	sp := newScripted().on("a", func(context.Context, int, agent.Request) (agent.Response, error) { return calls("echo") })
	a := mustNew(t, agent.Config{
		Provider: sp,
		Models:   fallback.Settings{Primary: "a"},
		Tools:    []agent.Tool{okTool("echo", "again")},
		MaxTurns: 3,
	})
	res, err := a.Run(t.Context(), user("loop"))
	if !errors.Is(err, agent.ErrMaxTurns) {
		t.Fatalf("err = %v, want ErrMaxTurns", err)
	}
	equal(t, "turns", res.Turns, 3)
	equal(t, "messages", len(res.Messages), 1+3*2)
	equal(t, "requests", len(sp.Models()), 3)
}

// A chain may span providers; user callbacks still run besides the events.
func TestProvidersAndCallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pa := newScripted().on("a", failing(500))
		pb := newScripted().on("b", always("from b"))
		var userTransitions, userRetries []string
		var ev events
		a := mustNew(t, agent.Config{
			Providers: map[string]agent.Provider{"a": pa, "b": pb},
			Models: fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1,
				OnTransition: func(tr fallback.Transition) { userTransitions = append(userTransitions, tr.FromModel+">"+tr.ToModel) }},
			Retry: retry.Policy{MaxRetries: 1, OnRetry: func(at retry.Attempt) {
				userRetries = append(userRetries, at.Err.Error())
			}},
			OnEvent: ev.add,
		})
		res, err := a.Run(t.Context(), user("hi"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "answer", res.Answer, "from b")
		equal(t, "requests to a", pa.Count("a"), 2)
		equal(t, "requests to b", pb.Count("b"), 1)
		equalSlices(t, "user transitions", userTransitions, []string{"a>b"})
		equal(t, "user retries", len(userRetries), 1)
		tr := ev.of(agent.EventModelTransition)
		equal(t, "transition events", len(tr), 1)
		equal(t, "transition event model", tr[0].Model, "b")
		equal(t, "retry events", len(ev.of(agent.EventRetry)), 1)
	})
}

func TestNewRejectsBadConfig(t *testing.T) {
	p := newScripted()
	tool := okTool("a", "")
	for _, tc := range []struct {
		name string
		cfg  agent.Config
		want string
	}{
		{"no provider", agent.Config{Models: fallback.Settings{Primary: "m"}}, `no provider for model "m"`},
		{"no provider for a chain model", agent.Config{Providers: map[string]agent.Provider{"m": p},
			Models: fallback.Settings{Primary: "m", Chain: []string{"n"}}}, `no provider for model "n"`},
		{"no primary", agent.Config{Provider: p}, "agent: Models:"},
		{"blank tool name", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"},
			Tools: []agent.Tool{okTool(" ", "")}}, "Tools[0] has a blank name"},
		{"duplicate tool", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"},
			Tools: []agent.Tool{tool, tool}}, `duplicate tool name "a"`},
		{"tool without Func", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"},
			Tools: []agent.Tool{{Name: "x"}}}, `tool "x" has no Func`},
		{"bad parameters", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"},
			Tools: []agent.Tool{{Name: "x", Func: tool.Func, Parameters: []byte("{")}}}, `tool "x": Parameters is not valid JSON`},
		{"backup of unknown tool", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"},
			Tools: []agent.Tool{tool}, Backups: map[string][]string{"z": {"a"}}}, `Backups names unknown tool "z"`},
		{"unknown backup", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"},
			Tools: []agent.Tool{tool}, Backups: map[string][]string{"a": {"y"}}}, `Backups["a"] names unknown tool "y"`},
		{"negative MaxTurns", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"}, MaxTurns: -1},
			"MaxTurns must not be negative (got -1)"},
		{"negative TurnAttempts", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"}, TurnAttempts: -2},
			"TurnAttempts must not be negative (got -2)"},
		{"negative ToolTimeout", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"}, ToolTimeout: -time.Second},
			"ToolTimeout must not be negative (got -1s)"},
		{"negative RequestTimeout", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"}, RequestTimeout: -1},
			"RequestTimeout must not be negative"},
		{"bad tool breaker", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"},
			ToolBreaker: breakerSettings(-1)}, "agent: ToolBreaker:"},
		{"bad model breaker", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m", TripThreshold: -1}},
			"agent: Models:"},
		{"bad retry policy", agent.Config{Provider: p, Models: fallback.Settings{Primary: "m"},
			Retry: retry.Policy{BaseDelay: -1}}, "agent: Retry:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := agent.New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, %v; want an error containing %q", a, err, tc.want)
			}
		})
	}
}
