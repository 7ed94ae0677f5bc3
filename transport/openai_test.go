package transport_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/transport"
)

// TestOpenAIOutage runs the real openai-go client through the RoundTripper
// while a scripted server has a blip, then an outage, then recovers: the
// ladder absorbs the blip, the outage trips the host's breaker (later calls
// are refused without reaching the server), and after the cooldown one probe
// proves the recovery and closes it.
func TestOpenAIOutage(t *testing.T) {
	var down atomic.Int32 // failures still to answer; -1: down until told
	srv := llmtest.NewOpenAI(func(llmtest.Request) llmtest.Reply {
		if n := down.Load(); n < 0 || (n > 0 && down.CompareAndSwap(n, n-1)) {
			return llmtest.Error(http.StatusServiceUnavailable)
		}
		return llmtest.Text("pong")
	})
	defer srv.Close()

	var mu sync.Mutex
	now := time.Unix(1e9, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	var changes []string
	rt := newRT(t, transport.Settings{
		Retry: fast,
		Breaker: breaker.Settings{Now: clock, OnStateChange: func(_ string, from, to breaker.State) {
			changes = append(changes, from.String()+"->"+to.String())
		}},
	})
	client := sdk.NewClient(
		option.WithBaseURL(srv.BaseURL()),
		option.WithAPIKey("sk-test"),
		option.WithHTTPClient(&http.Client{Transport: rt}),
		option.WithMaxRetries(0), // the ladder retries, not the SDK
	)
	ask := func() (string, error) {
		res, err := client.Chat.Completions.New(context.Background(), sdk.ChatCompletionNewParams{
			Model:    "gpt-test",
			Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("ping")},
		})
		if err != nil {
			return "", err
		}
		return res.Choices[0].Message.Content, nil
	}
	key := strings.TrimPrefix(srv.URL, "http://")
	state := func() breaker.State { return rt.Registry().Breaker(key).State() }

	// A blip: two 503s, absorbed by the ladder.
	down.Store(2)
	if got, err := ask(); err != nil || got != "pong" {
		t.Fatalf("during a blip: %q, %v", got, err)
	}
	if n := srv.Count("gpt-test"); n != 3 {
		t.Errorf("%d requests for the blip, want 3", n)
	}

	// An outage: three calls fail after the ladder's 4 attempts each, with
	// the SDK's own error for the 503; the third trips the breaker.
	down.Store(-1)
	for i := range 3 {
		_, err := ask()
		if apiErr, ok := errors.AsType[*sdk.Error](err); !ok || apiErr.StatusCode != 503 {
			t.Fatalf("call %d of the outage: %v, want the SDK's 503 error", i+1, err)
		}
	}
	if state() != breaker.Open {
		t.Fatalf("state %v after the outage, want open", state())
	}
	before := srv.Count("gpt-test")
	_, err := ask()
	if !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("while open: %v, want a refusal", err)
	}
	if _, ok := errors.AsType[*transport.OpenError](err); !ok {
		t.Errorf("while open: %T, want a *transport.OpenError inside", err)
	}
	if n := srv.Count("gpt-test"); n != before {
		t.Errorf("a refused call reached the server (%d requests, want %d)", n, before)
	}

	// Recovery: after the cooldown the next call is the probe, and closes it.
	down.Store(0)
	mu.Lock()
	now = now.Add(breaker.DefaultRecoveryDuration)
	mu.Unlock()
	if got, err := ask(); err != nil || got != "pong" {
		t.Fatalf("the probe: %q, %v", got, err)
	}
	if state() != breaker.Closed {
		t.Errorf("state %v after the probe, want closed", state())
	}
	if want := "closed->open open->half-open half-open->closed"; strings.Join(changes, " ") != want {
		t.Errorf("changes %q, want %q", changes, want)
	}
	st := rt.Registry().Stats(key)
	if st.Successes != 2 || st.Failures != 3 {
		t.Errorf("stats %+v, want 2 successes, 3 failures", st)
	}
}
