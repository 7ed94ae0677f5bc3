package transport_test

import (
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/transport"
)

// TestRetryBudget (SEMANTICS §8.3): each request adds RetryBudget to its
// key's budget, which starts full at RetryBudgetBurst; each retry spends one;
// with less than one the ladder stops and the last answer is returned.
func TestRetryBudget(t *testing.T) {
	calls := 0
	base := handlerRT{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.WriteHeader(http.StatusServiceUnavailable)
	})}
	rt := newRT(t, transport.Settings{Base: base, Retry: fast, RetryBudget: 0.5, RetryBudgetBurst: 2,
		Breaker: breaker.Settings{FailureThreshold: 1 << 20}})
	var got []int
	for range 4 {
		calls = 0
		req, _ := http.NewRequest(http.MethodGet, "http://upstream.test/v1", nil)
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("status %d", resp.StatusCode)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got = append(got, calls)
	}
	// 2 tokens: 2 retries; then 0.5: none; 1: one; 0.5: none.
	if want := []int{3, 1, 2, 1}; !slices.Equal(got, want) {
		t.Fatalf("attempts per request %v, want %v", got, want)
	}
	off := newRT(t, transport.Settings{Base: base, Retry: fast, RetryBudget: -1, RetryBudgetBurst: 1,
		Breaker: breaker.Settings{FailureThreshold: 1 << 20}})
	for range 2 {
		calls = 0
		req, _ := http.NewRequest(http.MethodGet, "http://upstream.test/v1", nil)
		resp, _ := off.RoundTrip(req)
		resp.Body.Close()
		if calls != 4 {
			t.Fatalf("budget off: %d attempts, want the ladder's 4", calls)
		}
	}
}

func TestRetryBudgetSettings(t *testing.T) {
	for _, c := range []struct {
		s    transport.Settings
		want string
	}{
		{transport.Settings{RetryBudget: math.NaN()}, "Settings.RetryBudget"},
		{transport.Settings{RetryBudgetBurst: -1}, "Settings.RetryBudgetBurst must not be negative"},
	} {
		_, err := transport.New(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v; want an error naming %s", c.s, err, c.want)
		}
	}
}
