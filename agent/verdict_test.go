package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/retry"
)

// rejecting answers every request with a malformed-request error carrying the
// provider's own message and code, as the adapters report it.
func rejecting(code int) func(context.Context, int, agent.Request) (agent.Response, error) {
	return func(context.Context, int, agent.Request) (agent.Response, error) {
		return agent.Response{}, &retry.StatusError{Code: code, Err: errors.New("sdk error"),
			Message: "maximum context length is 8192 tokens", ErrorCode: "context_length_exceeded"}
	}
}

// A request the provider rejects as malformed (400, 413, 422) carries no
// verdict (SEMANTICS 4, 6 rev 2): the run ends at once with ErrTurnFailed and
// the provider's message and code; the model breaker and the tool breakers are
// exactly as they were, whatever state the model breaker was in.
func TestMalformedRequestCarriesNoVerdict(t *testing.T) {
	for _, code := range []int{400, 413, 422} {
		t.Run(fmt.Sprint("HTTP ", code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				turn := 0
				sp := newScripted().on("a", func(ctx context.Context, n int, req agent.Request) (agent.Response, error) {
					turn++
					if turn == 1 {
						return toolThenAnswer("echo")(ctx, n, req)
					}
					return rejecting(code)(ctx, n, req)
				}).on("b", always("from b"))
				a := mustNew(t, agent.Config{
					Provider: sp,
					Models:   fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1},
					Tools:    []agent.Tool{okTool("echo", "hi")},
				})
				models := a.Models().Snapshot()
				res, err := a.Run(t.Context(), user("hi"))
				if !errors.Is(err, agent.ErrTurnFailed) {
					t.Fatalf("err = %v, want ErrTurnFailed", err)
				}
				for _, want := range []string{"maximum context length is 8192 tokens", "context_length_exceeded"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error text %q lacks %q", err, want)
					}
				}
				equalSlices(t, "requests", sp.Models(), []string{"a", "a"}) // never sent on to b
				equal(t, "attempts of turn 2", len(res.Attempts), 2)
				if got := a.Models().Snapshot(); !snapshotsEqual(got, models) {
					t.Errorf("model breaker %+v, want untouched %+v", got, models)
				}
				if s := a.Tools().Breaker("echo").Snapshot(); s.ConsecutiveFailures != 0 || s.State != 0 {
					t.Errorf("tool breaker %+v, want untouched", s)
				}
			})
		})
	}
}

// A probe turn rejected as malformed is cancelled, not failed: the model
// breaker stays Recovering and the next turn is the probe again.
func TestMalformedProbeTurnFreesTheProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		sp := newScripted().on("a", func(ctx context.Context, n int, req agent.Request) (agent.Response, error) {
			calls++
			if calls == 1 {
				return failing(500)(ctx, n, req)
			}
			return rejecting(400)(ctx, n, req)
		}).on("b", always("from b"))
		a := mustNew(t, agent.Config{
			Provider: sp,
			Models:   fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1},
			Retry:    noRetry,
		})
		if res, err := a.Run(t.Context(), user("hi")); err != nil || res.Answer != "from b" {
			t.Fatalf("first run: %v, %v", res, err)
		}
		time.Sleep(fallback.DefaultRecoveryTimeout)
		_, err := a.Run(t.Context(), user("too long"))
		if !errors.Is(err, agent.ErrTurnFailed) {
			t.Fatalf("err = %v, want ErrTurnFailed", err)
		}
		s := a.Models().Snapshot()
		equal(t, "state", s.State, fallback.Recovering)
		equal(t, "probe failures", s.ConsecutiveFailures, 0)
		tk, err := a.Models().Begin()
		if err != nil || !tk.IsProbe() {
			t.Fatalf("next turn is not the probe (%v): the rejected probe held its slot", err)
		}
		tk.Cancel()
	})
}

// 401, 403 and 404 are failures of the model that answered (SEMANTICS 4 rev 2):
// the turn moves on to whatever the model breaker routes to next.
func TestAuthAndNotFoundMoveOn(t *testing.T) {
	for _, code := range []int{401, 403, 404} {
		t.Run(fmt.Sprint("HTTP ", code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sp := newScripted().on("a", failing(code)).on("b", always("from b"))
				a := mustNew(t, agent.Config{
					Provider: sp,
					Models:   fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1},
				})
				res, err := a.Run(t.Context(), user("hi"))
				if err != nil {
					t.Fatal(err)
				}
				equal(t, "answer", res.Answer, "from b")
				equalSlices(t, "requests", sp.Models(), []string{"a", "b"}) // never retried on a
				equal(t, "state", a.Models().State(), fallback.Fallback)
			})
		})
	}
}

// The real adapter end to end: an OpenAI 400 context_length_exceeded ends the
// run with the API's message and code, and the primary's breaker never sees it.
func TestE2EContextLengthExceeded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		body := `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
		h := llmtest.NewOpenAIHandler(llmtest.Always(llmtest.Raw(400, body)))
		a := mustNew(t, agent.Config{
			Provider: memOpenAI(t, h),
			Models:   fallback.Settings{Primary: "primary", Chain: []string{"backup"}},
		})
		for range 5 { // more than the trip threshold
			_, err := a.Run(t.Context(), user("a very long prompt"))
			want := "agent: turn failed (turn 1, model primary): retry: HTTP 400 Bad Request: " +
				"This model's maximum context length is 8192 tokens. (code context_length_exceeded, type invalid_request_error)"
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant %s", err, want)
			}
		}
		equal(t, "primary requests", h.Count("primary"), 5)
		equal(t, "state", a.Models().State(), fallback.Primary)
		equal(t, "failures", a.Models().Snapshot().ConsecutiveFailures, 0)
	})
}

func snapshotsEqual(a, b fallback.Snapshot) bool {
	if a.State != b.State || a.ConsecutiveFailures != b.ConsecutiveFailures || a.ProbeSuccesses != b.ProbeSuccesses ||
		!a.TrippedAt.Equal(b.TrippedAt) || a.FallbackActivated != b.FallbackActivated || len(a.Chain) != len(b.Chain) {
		return false
	}
	for i := range a.Chain {
		if a.Chain[i] != b.Chain[i] {
			return false
		}
	}
	return true
}
