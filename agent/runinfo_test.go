package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/anthropic"
)

// The stop reason the provider reported reaches the attempt record, the event
// and the result; an answer cut at the token limit is returned, with
// StopReason length and a Warn record saying so.
func TestStopReasonLength(t *testing.T) {
	var buf bytes.Buffer
	var ev events
	sp := newScripted().on("m", func(_ context.Context, n int, req agent.Request) (agent.Response, error) {
		if n == 1 {
			r, err := calls("echo")
			r.StopReason = agent.StopToolCalls
			return r, err
		}
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "The answer is"},
			StopReason: agent.StopLength}, nil
	})
	a := mustNew(t, agent.Config{
		Provider: sp,
		Models:   fallback.Settings{Primary: "m"},
		Tools:    []agent.Tool{okTool("echo", "hi")},
		OnEvent:  ev.add,
		Logger:   slog.New(slog.NewTextHandler(&buf, nil)),
	})
	res, err := a.Run(t.Context(), user("hi"))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "answer", res.Answer, "The answer is")
	equal(t, "result stop reason", res.StopReason, agent.StopLength)
	equal(t, "first attempt", res.Attempts[0].StopReason, agent.StopToolCalls)
	equal(t, "second attempt", res.Attempts[1].StopReason, agent.StopLength)
	fin := ev.of(agent.EventTurnFinished)
	equal(t, "event stop reason", fin[len(fin)-1].StopReason, agent.StopLength)
	if !strings.Contains(buf.String(), `level=WARN msg="agent: answer cut at the token limit"`) ||
		!strings.Contains(buf.String(), "stop_reason=length") {
		t.Errorf("log does not say the answer was cut:\n%s", buf.String())
	}
}

// Both real adapters fill the stop reason end to end.
func TestE2EStopReasons(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    *llmtest.Handler
		p    func(testing.TB, *llmtest.Handler) agent.Provider
	}{
		{"openai", llmtest.NewOpenAIHandler(llmtest.Always(llmtest.Raw(200,
			`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"cut"},"finish_reason":"length"}]}`))),
			func(t testing.TB, h *llmtest.Handler) agent.Provider { return memOpenAI(t, h) }},
		{"anthropic", llmtest.NewAnthropicHandler(llmtest.Always(llmtest.Raw(200,
			`{"id":"msg","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"cut"}],"stop_reason":"max_tokens","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":2}}`))),
			func(t testing.TB, h *llmtest.Handler) agent.Provider { return memAnthropic(t, h) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := mustNew(t, agent.Config{Provider: tc.p(t, tc.h), Models: fallback.Settings{Primary: "m"}})
			res, err := a.Run(t.Context(), user("hi"))
			if err != nil {
				t.Fatal(err)
			}
			equal(t, "answer", res.Answer, "cut")
			equal(t, "stop reason", res.StopReason, agent.StopLength)
		})
	}
}

// ctxKey marks the caller's context, to see that the logger gets it.
type ctxKey struct{}

// ctxHandler records, for every record, the run attribute and the value of
// ctxKey in the context it was logged with.
type ctxHandler struct {
	mu   sync.Mutex
	seen []string // "run=<id> ctx=<value>"
}

func (h *ctxHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *ctxHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *ctxHandler) WithGroup(string) slog.Handler            { return h }
func (h *ctxHandler) Handle(ctx context.Context, r slog.Record) error {
	var run string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "run" {
			run = a.Value.String()
		}
		return true
	})
	if run == "" { // breaker transitions belong to no run
		return nil
	}
	v, _ := ctx.Value(ctxKey{}).(string)
	h.mu.Lock()
	h.seen = append(h.seen, "run="+run+" ctx="+v)
	h.mu.Unlock()
	return nil
}

// Every event of a run carries its id; two runs get different ids; an id set
// on the context is used, and tools see it; the logger gets the run's context.
func TestRunID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ev events
		var h ctxHandler
		var toolSaw []string
		var mu sync.Mutex
		tool := rawTool("who", func(ctx context.Context, _ json.RawMessage) (string, error) {
			id, _ := agent.RunIDFromContext(ctx)
			mu.Lock()
			toolSaw = append(toolSaw, id)
			mu.Unlock()
			return id, nil
		})
		a := mustNew(t, agent.Config{
			Provider: newScripted().on("a", failing(500)).on("b", toolThenAnswer("who")),
			Models:   fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1},
			Retry:    noRetry,
			Tools:    []agent.Tool{tool},
			OnEvent:  ev.add,
			Logger:   slog.New(&h),
		})
		first, err := a.Run(t.Context(), user("1"))
		if err != nil {
			t.Fatal(err)
		}
		if len(first.RunID) != 16 {
			t.Fatalf("generated run id %q, want 16 hex digits", first.RunID)
		}
		second, err := a.Run(t.Context(), user("2"))
		if err != nil {
			t.Fatal(err)
		}
		if second.RunID == first.RunID {
			t.Fatalf("two runs share the id %q", first.RunID)
		}
		ctx := context.WithValue(agent.ContextWithRunID(t.Context(), "req-42"), ctxKey{}, "mine")
		third, err := a.Run(ctx, user("3"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "third run id", third.RunID, "req-42")

		counts := map[string]int{}
		for _, e := range ev.all {
			switch e.Kind {
			case agent.EventModelTransition, agent.EventToolTransition:
				equal(t, "transition run id", e.RunID, "")
			default:
				counts[e.RunID]++
			}
		}
		// Run 1: a (failed), b (tool call), the call, b (answer), each attempt
		// started and finished: 7; runs 2 and 3 start on b: 5 each.
		equal(t, "events of run 1", counts[first.RunID], 7)
		equal(t, "events of run 2", counts[second.RunID], 5)
		equal(t, "events of run 3", counts["req-42"], 5)
		equalSlices(t, "ids the tool saw", toolSaw, []string{first.RunID, second.RunID, "req-42"})
		for _, s := range h.seen {
			if strings.HasPrefix(s, "run=req-42 ") != strings.HasSuffix(s, " ctx=mine") {
				t.Errorf("record %q: the logger did not get the run's context", s)
			}
		}
		equal(t, "records logged", len(h.seen), 17)
	})
}

func memAnthropic(t testing.TB, h http.Handler) agent.Provider {
	t.Helper()
	p, err := anthropic.New(anthropic.Config{BaseURL: "http://llmtest.test", APIKey: "test",
		HTTPClient: &http.Client{Transport: handlerTransport{h}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
