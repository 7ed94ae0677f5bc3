package providertest

import (
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/llmtest"
)

// Harness describes one provider adapter to the shared checks.
// NewServer, NewProvider, BadResponse and Expected are required: every
// shared check fails at once without them.
type Harness struct {
	// Name names the provider ("openai") in the messages about a
	// Harness with a required field missing.
	Name string

	// NewServer starts a llmtest server speaking the provider's wire
	// format (llmtest.NewOpenAI, llmtest.NewAnthropic).
	NewServer func(llmtest.Script) *llmtest.Server

	// NewProvider builds the adapter under test for baseURL, failing t on
	// error. now is the clock for Retry-After HTTP-dates; nil means the
	// adapter's default (time.Now).
	NewProvider func(t testing.TB, baseURL string, now func() time.Time) agent.Provider

	// BadResponse is the adapter's sentinel for a 2xx response it could
	// not read (the package's ErrBadResponse).
	BadResponse error

	// Expected is what the fake server decodes from msgs on the
	// provider's wire; [TestRoundTrip] compares against it.
	Expected func(msgs []agent.Message) []llmtest.Message

	// ToolCallIDPrefix is how the real service starts tool-call IDs
	// ("call_", "toolu_"); the shared [TestResponses] cases script IDs of
	// that form. Zero: no prefix.
	ToolCallIDPrefix string

	// FillsToolCallIDs states that the adapter gives every returned tool
	// call a non-empty ID, even when the response has none;
	// [FuzzResponseBody] then checks it. false: not checked.
	FillsToolCallIDs bool
}

// check stops the test if a field a shared check needs is missing, rather
// than letting it panic on a nil function.
func (h Harness) check(t testing.TB) {
	t.Helper()
	switch {
	case h.NewServer == nil, h.NewProvider == nil:
		t.Fatalf("providertest: Harness %q needs NewServer and NewProvider", h.Name)
	case h.BadResponse == nil:
		t.Fatalf("providertest: Harness %q needs BadResponse", h.Name)
	case h.Expected == nil:
		t.Fatalf("providertest: Harness %q needs Expected", h.Name)
	}
}

// UserRequest is a minimal request for model: one user message, "hi".
func UserRequest(model string) agent.Request {
	return agent.Request{Model: model, Messages: []agent.Message{{Role: agent.RoleUser, Content: "hi"}}}
}

// JSONEqual fails t unless got and want are the same JSON document
// (compared semantically: key order and spacing do not matter).
func JSONEqual(t testing.TB, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got invalid JSON %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want invalid JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON mismatch\n got: %s\nwant: %s", got, want)
	}
}

// ResponseCase is one scripted reply and the agent.Response the adapter
// must turn it into.
type ResponseCase struct {
	// Name names the subtest.
	Name string
	// Reply is what the fake server sends.
	Reply llmtest.Reply
	// Want is the exact response Complete must return.
	Want agent.Response
}

// TestResponses checks that each scripted reply (the shared cases: plain
// text with usage, then two tool calls that must keep their order; then
// extra) comes back from Complete exactly as the case's Want, with no error.
// The request names model "m" and the fake server reports the model it was
// asked for, so a Want with no Model expects Response.Model "m".
// Each case is a subtest with its own server.
func TestResponses(t *testing.T, h Harness, extra ...ResponseCase) {
	h.check(t)
	idB, idA := h.ToolCallIDPrefix+"b", h.ToolCallIDPrefix+"a"
	cases := append([]ResponseCase{{
		Name:  "text",
		Reply: llmtest.Reply{Text: "hello", Usage: llmtest.Usage{InputTokens: 12, OutputTokens: 3}},
		Want: agent.Response{
			Message:    agent.Message{Role: agent.RoleAssistant, Content: "hello"},
			Usage:      agent.Usage{InputTokens: 12, OutputTokens: 3},
			StopReason: agent.StopEnd,
		},
	}, {
		Name: "two tool calls in order",
		Reply: llmtest.Reply{Text: "let me look", ToolCalls: []llmtest.ToolCall{
			{ID: idB, Name: "search", Arguments: `{"q":"go"}`},
			{ID: idA, Name: "fetch", Arguments: `{"url":"x"}`},
		}, Usage: llmtest.Usage{InputTokens: 20, OutputTokens: 9}},
		Want: agent.Response{
			Message: agent.Message{Role: agent.RoleAssistant, Content: "let me look", ToolCalls: []agent.ToolCall{
				{ID: idB, Name: "search", Arguments: json.RawMessage(`{"q":"go"}`)},
				{ID: idA, Name: "fetch", Arguments: json.RawMessage(`{"url":"x"}`)},
			}},
			Usage:      agent.Usage{InputTokens: 20, OutputTokens: 9},
			StopReason: agent.StopToolCalls,
		},
	}}, extra...)
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			srv := h.NewServer(llmtest.Always(tt.Reply))
			defer srv.Close()
			got, err := h.NewProvider(t, srv.BaseURL(), nil).Complete(context.Background(), UserRequest("m"))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.Want
			if want.Model == "" {
				want.Model = "m"
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestConcurrentUse calls Complete from 8 goroutines on one adapter, each
// with its own model, against a server that echoes the model: every call
// must get its own answer, and the server must see 8 requests.
func TestConcurrentUse(t *testing.T, h Harness) {
	h.check(t)
	srv := h.NewServer(func(r llmtest.Request) llmtest.Reply { return llmtest.Text(r.Model) })
	defer srv.Close()
	p := h.NewProvider(t, srv.BaseURL(), nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			model := string(rune('a' + i))
			resp, err := p.Complete(context.Background(), UserRequest(model))
			if err != nil || resp.Message.Content != model {
				t.Errorf("model %s: %+v, %v", model, resp, err)
			}
		})
	}
	wg.Wait()
	if srv.Count("") != 8 {
		t.Errorf("%d requests, want 8", srv.Count(""))
	}
}
