package agent_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/anthropic"
	"github.com/loopctl/loopctl-go/provider/openai"
	"github.com/loopctl/loopctl-go/retry"
)

// The end-to-end tests drive the real OpenAI (and Anthropic) SDK clients,
// through the provider adapters, against llmtest's scripted server.
//
// Most run inside a testing/synctest bubble so that retry waits, Retry-After
// hints, request deadlines and breaker cooldowns take no real time. A
// loopback socket is not "durably blocking" for synctest (time would never
// advance while a request hangs on it), so inside the bubble the SDK's
// http.Client gets an in-memory transport that calls llmtest's Handler
// directly: everything above the socket (the SDK's encoding, headers, status
// and error handling, the adapter's mapping) is the real thing. The tests that
// need no waiting (and the runnable example) use the real loopback server.

// handlerTransport is an http.RoundTripper that serves requests with an
// http.Handler in memory. A handler that aborts (http.ErrAbortHandler, what
// llmtest does to a request the client gave up on) becomes the request
// context's error, or io.ErrUnexpectedEOF.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (resp *http.Response, err error) {
	if req.Body != nil {
		defer req.Body.Close()
	}
	rec := httptest.NewRecorder()
	defer func() {
		if r := recover(); r != nil {
			if r != http.ErrAbortHandler {
				panic(r)
			}
			resp, err = nil, req.Context().Err()
			if err == nil {
				err = io.ErrUnexpectedEOF
			}
		}
	}()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

func memOpenAI(t testing.TB, h http.Handler) agent.Provider {
	t.Helper()
	p, err := openai.New(openai.Config{BaseURL: "http://llmtest.test/v1", APIKey: "test",
		HTTPClient: &http.Client{Transport: handlerTransport{h}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type lookupArgs struct {
	Q string `json:"q" desc:"what to look up"`
}

func lookupTool(t testing.TB) agent.Tool {
	t.Helper()
	tool, err := agent.NewTool("lookup", "look something up", func(_ context.Context, a lookupArgs) (string, error) {
		return "found " + a.Q, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// lookupThenAnswer calls lookup, then answers with the tool result it read.
func lookupThenAnswer(r llmtest.Request) llmtest.Reply {
	if last := r.Last(); last.Role == "tool" {
		return llmtest.Text("answer: " + last.Content)
	}
	return llmtest.Calls(llmtest.Call("lookup", `{"q":"go"}`))
}

func transitions(ev *events) []string {
	var out []string
	for _, e := range ev.of(agent.EventModelTransition) {
		tr := e.Transition
		out = append(out, fmt.Sprintf("%s>%s %s>%s", tr.From, tr.To, tr.FromModel, tr.ToModel))
	}
	return out
}

// 500s are retried by the ladder, then count as failed turns until the model
// breaker trips; the chain serves the rest of the run.
func TestE2EServerErrorsTripToChain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		h := llmtest.NewOpenAIHandler(llmtest.ByModel(map[string]llmtest.Script{
			"primary": llmtest.Always(llmtest.Error(500)),
			"backup":  lookupThenAnswer,
		}))
		a := mustNew(t, agent.Config{
			Provider: memOpenAI(t, h),
			Models:   fallback.Settings{Primary: "primary", Chain: []string{"backup"}},
			Tools:    []agent.Tool{lookupTool(t)},
			OnEvent:  ev.add,
		})
		res, err := a.Run(t.Context(), user("look up go"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "answer", res.Answer, "answer: found go")
		// 3 failed turns (the trip threshold) x 4 requests (the ladder's default).
		equal(t, "primary requests", h.Count("primary"), 12)
		equal(t, "backup requests", h.Count("backup"), 2)
		equalSlices(t, "transitions", transitions(&ev), []string{"primary>fallback primary>backup"})
		var se *retry.StatusError
		if !errors.As(res.Attempts[0].Err, &se) || se.Code != 500 {
			t.Fatalf("first attempt error = %v, want a 500 StatusError", res.Attempts[0].Err)
		}
		equal(t, "model state", a.Models().State(), fallback.Fallback)
	})
}

// A 429 waits exactly its Retry-After (fake time); four in a row escalate, and
// the escalation is a RateLimit failure of the turn.
func TestE2ERateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		h := llmtest.NewOpenAIHandler(llmtest.ByModel(map[string]llmtest.Script{
			"primary": llmtest.Sequence(llmtest.RateLimit("7"), llmtest.Text("after the wait")),
		}))
		a := mustNew(t, agent.Config{
			Provider: memOpenAI(t, h),
			Models:   fallback.Settings{Primary: "primary"},
			OnEvent:  ev.add,
		})
		start := time.Now()
		res, err := a.Run(t.Context(), user("hi"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "answer", res.Answer, "after the wait")
		equal(t, "fake time spent", time.Since(start), 7*time.Second)
		r := ev.of(agent.EventRetry)
		if len(r) != 1 || r[0].Duration != 7*time.Second {
			t.Fatalf("retry events = %+v, want one 7s wait", r)
		}

		// Now the primary only ever says 429 and a backup is usable (rev 3):
		// the first 429 escalates at once and the backup serves, no wait.
		h2 := llmtest.NewOpenAIHandler(llmtest.ByModel(map[string]llmtest.Script{
			"primary": llmtest.Always(llmtest.RateLimit("2")),
			"backup":  llmtest.Always(llmtest.Text("from backup")),
		}))
		a2 := mustNew(t, agent.Config{
			Provider: memOpenAI(t, h2),
			Models:   fallback.Settings{Primary: "primary", Chain: []string{"backup"}, TripThreshold: 1},
		})
		start = time.Now()
		res, err = a2.Run(t.Context(), user("hi"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "answer", res.Answer, "from backup")
		equal(t, "primary requests", h2.Count("primary"), 1)
		equal(t, "fake time spent", time.Since(start), 0)
		equal(t, "failed over", res.Attempts[0].FailedOver, true)
		var esc *retry.EscalationError
		if !errors.As(res.Attempts[0].Err, &esc) || esc.Attempts != 1 || esc.RetryAfter != 2*time.Second {
			t.Fatalf("first attempt error = %#v, want an escalation after 1 response with a 2s hint", res.Attempts[0].Err)
		}
	})
}

// A response that hangs is cut by RequestTimeout and retried; a hang cut by
// the caller's own deadline ends the run and counts as a failed turn (a
// deadline is not a cancellation: SEMANTICS 1, "Decision (cancel)").
func TestE2EHangingResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := llmtest.NewOpenAIHandler(llmtest.ByModel(map[string]llmtest.Script{
			"primary": llmtest.Sequence(llmtest.Hang(), llmtest.Text("second try")),
		}))
		a := mustNew(t, agent.Config{
			Provider:       memOpenAI(t, h),
			Models:         fallback.Settings{Primary: "primary"},
			RequestTimeout: 10 * time.Second,
			Retry:          retry.Policy{Rand: func() float64 { return 0 }}, // no backoff wait
		})
		start := time.Now()
		res, err := a.Run(t.Context(), user("hi"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "answer", res.Answer, "second try")
		equal(t, "requests", res.Attempts[0].Requests, 2)
		equal(t, "fake time spent", time.Since(start), 10*time.Second)

		h2 := llmtest.NewOpenAIHandler(llmtest.Always(llmtest.Hang()))
		a2 := mustNew(t, agent.Config{Provider: memOpenAI(t, h2), Models: fallback.Settings{Primary: "primary"}})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		_, err = a2.Run(ctx, user("hi"))
		if !errors.Is(err, agent.ErrCanceled) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrCanceled and DeadlineExceeded", err)
		}
		equal(t, "model failures", a2.Models().Snapshot().ConsecutiveFailures, 1)
		equal(t, "requests", h2.Count(""), 1)
	})
}

// A malformed 200 body is a transient error: retried, and the run goes on.
func TestE2EMalformedResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := llmtest.NewOpenAIHandler(llmtest.Sequence(llmtest.Malformed(), llmtest.Text("fine")))
		a := mustNew(t, agent.Config{Provider: memOpenAI(t, h), Models: fallback.Settings{Primary: "primary"}})
		res, err := a.Run(t.Context(), user("hi"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "answer", res.Answer, "fine")
		equal(t, "requests", h.Count(""), 2)
		equal(t, "model failures", a.Models().Snapshot().ConsecutiveFailures, 0)

		// Malformed forever: the turn fails on the ladder's 4 requests each attempt.
		h2 := llmtest.NewOpenAIHandler(llmtest.Always(llmtest.Malformed()))
		a2 := mustNew(t, agent.Config{Provider: memOpenAI(t, h2), Models: fallback.Settings{Primary: "primary"}, TurnAttempts: 2})
		_, err = a2.Run(t.Context(), user("hi"))
		if !errors.Is(err, agent.ErrTurnFailed) || !errors.Is(err, openai.ErrBadResponse) {
			t.Fatalf("err = %v, want ErrTurnFailed wrapping openai.ErrBadResponse", err)
		}
		equal(t, "requests", h2.Count(""), 8)
	})
}

// When the chain runs out, FallbackExhausted ends the run before any further
// request reaches the server (real loopback server; no waiting involved).
func TestE2EChainRunsOut(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Error(503)))
	defer srv.Close()
	p, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	a := mustNew(t, agent.Config{
		Provider:     p,
		Models:       fallback.Settings{Primary: "primary", Chain: []string{"b1", "b2"}, TripThreshold: 1, MaxFailCount: 1},
		Retry:        noRetry,
		TurnAttempts: 10,
	})
	_, err = a.Run(t.Context(), user("hi"))
	if !errors.Is(err, fallback.ErrExhausted) {
		t.Fatalf("err = %v, want FallbackExhausted", err)
	}
	equalSlices(t, "requests", srv.Models(), []string{"primary", "b1", "b2"})
	for range 3 {
		if _, err := a.Run(t.Context(), user("again")); !errors.Is(err, fallback.ErrExhausted) {
			t.Fatalf("err = %v, want FallbackExhausted", err)
		}
	}
	equal(t, "requests after more runs", srv.Count(""), 3)
	srv.CloseClientConnections()
}

// After the cooldown the primary is probed; two successful probe turns close
// the model breaker.
func TestE2ERecoveryAfterCooldown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		var healthy atomic.Bool
		h := llmtest.NewOpenAIHandler(llmtest.ByModel(map[string]llmtest.Script{
			"primary": func(r llmtest.Request) llmtest.Reply {
				if !healthy.Load() {
					return llmtest.Error(502)
				}
				return lookupThenAnswer(r)
			},
			"backup": lookupThenAnswer,
		}))
		a := mustNew(t, agent.Config{
			Provider: memOpenAI(t, h),
			Models:   fallback.Settings{Primary: "primary", Chain: []string{"backup"}},
			Retry:    noRetry,
			Tools:    []agent.Tool{lookupTool(t)},
			OnEvent:  ev.add,
		})
		if _, err := a.Run(t.Context(), user("first")); err != nil {
			t.Fatal(err)
		}
		equal(t, "state after the outage", a.Models().State(), fallback.Fallback)

		healthy.Store(true)
		time.Sleep(30 * time.Second) // half the cooldown: still on the backup
		before := h.Count("primary")
		if _, err := a.Run(t.Context(), user("second")); err != nil {
			t.Fatal(err)
		}
		equal(t, "primary requests during the cooldown", h.Count("primary"), before)

		time.Sleep(30 * time.Second) // the cooldown (60s) has passed
		res, err := a.Run(t.Context(), user("third"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "answer", res.Answer, "answer: found go")
		for _, r := range res.Attempts {
			if r.Model != "primary" || !r.Probe {
				t.Fatalf("attempt %+v: want a probe turn on the primary", r)
			}
		}
		equal(t, "probe turns", len(res.Attempts), 2)
		equal(t, "state", a.Models().State(), fallback.Primary)
		equalSlices(t, "transitions", transitions(&ev), []string{
			"primary>fallback primary>backup",
			"fallback>recovering backup>primary",
			"recovering>primary primary>primary",
		})
		res, err = a.Run(t.Context(), user("fourth"))
		if err != nil || res.Attempts[0].Probe || res.Attempts[0].Model != "primary" {
			t.Fatalf("after recovery: %+v, %v; want a normal turn on the primary", res.Attempts, err)
		}
	})
}

// The same loop through the Anthropic adapter (real loopback server).
func TestE2EAnthropic(t *testing.T) {
	srv := llmtest.NewAnthropic(lookupThenAnswer)
	defer srv.Close()
	p, err := anthropic.New(anthropic.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	a := mustNew(t, agent.Config{
		Provider: p,
		Models:   fallback.Settings{Primary: "claude-test"},
		Tools:    []agent.Tool{lookupTool(t)},
	})
	res, err := a.Run(t.Context(), []agent.Message{
		{Role: agent.RoleSystem, Content: "be brief"},
		{Role: agent.RoleUser, Content: "look up go"},
	})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "answer", res.Answer, "answer: found go")
	reqs := srv.Requests()
	equal(t, "requests", len(reqs), 2)
	equal(t, "tools offered", reqs[0].Tools[0].Name, "lookup")
	equal(t, "system prompt", reqs[0].Messages[0].Role, "system")
	equal(t, "tool result sent back", reqs[1].Last().Content, "found go")
	srv.CloseClientConnections()
}
