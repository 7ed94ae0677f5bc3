package agent_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

func limited(code int, ra time.Duration, errCode string) func(context.Context, int, agent.Request) (agent.Response, error) {
	return func(context.Context, int, agent.Request) (agent.Response, error) {
		return agent.Response{}, &retry.StatusError{Code: code, RetryAfter: ra, ErrorCode: errCode, Err: errors.New("limited")}
	}
}

// SEMANTICS 7 (rev 3) in the agent: fail over rather than wait.
func TestFailOverRatherThanWait(t *testing.T) {
	for _, tc := range []struct {
		name     string
		primary  func(context.Context, int, agent.Request) (agent.Response, error)
		state    fallback.State
		requests int // to the primary
	}{
		{"429 Retry-After 30", limited(429, 30*time.Second, ""), fallback.Primary, 1},
		{"quota trips at once", limited(429, 0, "insufficient_quota"), fallback.Fallback, 1},
		{"hang: one timeout, not retried", func(ctx context.Context, _ int, _ agent.Request) (agent.Response, error) {
			<-ctx.Done()
			return agent.Response{}, ctx.Err()
		}, fallback.Primary, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sp := newScripted().on("a", tc.primary).on("b", always("from b"))
				a := mustNew(t, agent.Config{Provider: sp, RequestTimeout: 2 * time.Second,
					Models: fallback.Settings{Primary: "a", Chain: []string{"b"}}})
				start := time.Now()
				res, err := a.Run(t.Context(), user("hi"))
				if err != nil {
					t.Fatal(err)
				}
				equal(t, "answer", res.Answer, "from b")
				equal(t, "primary requests", sp.Count("a"), tc.requests)
				equal(t, "failed over", res.Attempts[0].FailedOver, true)
				wait := time.Duration(0)
				if tc.name[0] == 'h' {
					wait = 2 * time.Second // the one request timeout
				}
				equal(t, "fake time spent", time.Since(start), wait)
				equal(t, "state", a.Models().State(), tc.state)
			})
		})
	}
}

// Every model rate-limited: the run ends within its context deadline with the
// rate-limit error, not with the deadline.
func TestEveryModelRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := newScripted().on("a", limited(429, 30*time.Second, "")).on("b", limited(429, 30*time.Second, ""))
		a := mustNew(t, agent.Config{Provider: sp, Models: fallback.Settings{Primary: "a", Chain: []string{"b"}}})
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		start := time.Now()
		_, err := a.Run(ctx, user("hi"))
		if !errors.Is(err, agent.ErrTurnFailed) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want ErrTurnFailed with the rate limit", err)
		}
		if l, _ := retry.LimitOf(err); l != retry.Throttle {
			t.Fatalf("limit = %v, want throttle", l)
		}
		if d := time.Since(start); d >= 10*time.Second {
			t.Fatalf("run took %v, past its deadline", d)
		}
	})
}

// One probe per turn: a failed probe falls through to the chain in the same
// turn, and the turn never draws the probe slot again.
func TestOneProbePerTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sp := newScripted().on("a", failing(500)).on("b", always("from b"))
		a := mustNew(t, agent.Config{Provider: sp, Retry: noRetry,
			Models: fallback.Settings{Primary: "a", Chain: []string{"b"}, TripThreshold: 1}})
		if _, err := a.Run(t.Context(), user("trip")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(fallback.DefaultRecoveryTimeout)
		res, err := a.Run(t.Context(), user("probe"))
		if err != nil {
			t.Fatal(err)
		}
		equal(t, "attempts", len(res.Attempts), 2)
		equal(t, "probe", res.Attempts[0].Probe, true)
		equal(t, "fall-through", res.Attempts[1].Model, "b")
	})
}
