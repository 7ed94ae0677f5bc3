package gateway

import (
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// SEMANTICS rev 4 in the gateway (§8), on scripted upstreams in a bubble.

// A timed-out attempt reports how long it ran (§8.4), so the breaker dates
// it at the attempt's start: the cooldown of the trip it causes ends
// recovery_timeout after the attempt began, not after it timed out.
func TestTimeoutDatedAtAttemptStart(t *testing.T) {
	for _, hedge := range []bool{false, true} {
		t.Run(fmt.Sprintf("hedging %v", hedge), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				m := Model{Name: "smart", Primary: "up/a", Chain: []string{"up/b"},
					Breaker: Breaker{TripThreshold: 1, RecoveryTimeout: 10 * time.Second}}
				if hedge {
					m.HedgeAfter = time.Minute // past first_byte: the attempt ends on its own
				}
				cfg := Config{Models: []Model{m}, Timeouts: Timeouts{FirstByte: 3 * time.Second}}
				b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{
					"a": llmtest.Always(llmtest.Hang()), "b": llmtest.Always(llmtest.Text("from b"))}), cfg, Options{})
				start := time.Now()
				if a := b.post(chatBody("smart", false)); a.status != 200 {
					t.Fatalf("status %d: %s", a.status, a.body)
				}
				s := managers(b.gw)["smart"].Snapshot()
				if s.State != fallback.Fallback {
					t.Fatalf("breaker %v, want Fallback", s.State)
				}
				if want := start.Add(10 * time.Second); !s.CooldownEnds.Equal(want) {
					t.Errorf("cooldown ends %v after the attempt's start, want 10s (dated at the start)", s.CooldownEnds.Sub(start))
				}
			})
		})
	}
}

// With breaker.slow_call_after and slow_call_rate, a success whose first
// content came late is a slow call (§8.2): the primary answering every call
// after 2s trips once rate_min_calls of them are in the window; answering
// under slow_call_after it never does.
func TestSlowCallsTrip(t *testing.T) {
	for _, tc := range []struct {
		name   string
		delay  time.Duration
		stream bool
		want   fallback.State
	}{
		{"whole answers after 2s", 2 * time.Second, false, fallback.Fallback},
		{"streams after 2s", 2 * time.Second, true, fallback.Fallback},
		{"answers after 500ms", 500 * time.Millisecond, false, fallback.Primary},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				late := func(llmtest.Request) llmtest.Reply {
					gate := make(chan struct{})
					time.AfterFunc(tc.delay, func() { close(gate) })
					return llmtest.Reply{Text: "from a", Gate: gate}
				}
				cfg := Config{Models: []Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b"},
					Breaker: Breaker{SlowCallAfter: time.Second, SlowCallRate: 0.5, RateMinCalls: 4}}}}
				b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{
					"a": late, "b": llmtest.Always(llmtest.Text("from b"))}), cfg, Options{})
				for i := range 4 {
					if a := b.post(chatBody("smart", tc.stream)); a.status != 200 || !strings.Contains(a.body, "from a") {
						t.Fatalf("request %d: status %d: %s", i, a.status, a.body)
					}
				}
				if got := managers(b.gw)["smart"].State(); got != tc.want {
					t.Errorf("breaker %v after 4 answers, want %v", got, tc.want)
				}
			})
		})
	}
}

// The retry ladder's same-model retries spend the model's retry budget
// (§8.3): with none left the attempt ends with its failure, the refusal is
// counted, and the request moves on: to the backup when there is one (the
// breaker, still in Primary, would route it back to the primary), else the
// failure. With a failure-rate window the ladder makes no same-model retry
// while the backup is usable: the request's next attempt on the primary is
// the retry, and spends the token.
func TestRetryBudget(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retry     Retry
		toA       int // requests that reached the model, for 3 client requests (max_retries 3)
		exhausted float64
		chain     bool    // a healthy backup up/b
		rate      float64 // breaker.failure_rate
		verdicts  int     // the primary's failed turns (consecutive: it never succeeds); 0: not checked
	}{
		{"a backup: the request moves on", Retry{Budget: 0.01, BudgetBurst: 1}, 2 + 1 + 1, 3, true, 0, 3},
		{"a backup and a rate window: each try a verdict", Retry{Budget: 0.01, BudgetBurst: 1}, 2 + 1 + 1, 3, true, 0.9, 4},
		{"burst 2, no feed to speak of", Retry{Budget: 0.01, BudgetBurst: 2}, 3 + 1 + 1, 3, false, 0, 0},
		{"retry.budget: 0", Retry{Budget: RetryBudgetNone}, 3, 3, false, 0, 0},
		{"retry.budget: off", Retry{Budget: RetryBudgetOff, BudgetBurst: 1}, 3 * 4, 0, false, 0, 0},
		{"default (burst 10)", Retry{}, 3 * 4, 0, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc.retry.MaxRetries = 3
				m, want := Model{Name: "solo", Primary: "up/a", Attempts: 1, Breaker: Breaker{TripThreshold: 100, FailureRate: tc.rate}}, 502
				if tc.chain {
					m.Chain, m.Attempts, want = []string{"up/b"}, 0, 200
				}
				b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{
					"a": llmtest.Always(llmtest.Raw(500, `{"error":{"message":"boom","type":"server_error"}}`)),
					"b": llmtest.Always(llmtest.Text("from b"))}), Config{Models: []Model{m}, Retry: tc.retry}, Options{})
				for i := range 3 {
					if a := b.post(chatBody("solo", false)); a.status != want {
						t.Fatalf("request %d: status %d: %s", i, a.status, a.body)
					}
				}
				if got := b.up.Count("a"); got != tc.toA {
					t.Errorf("the primary got %d requests, want %d", got, tc.toA)
				}
				if got := testutil.ToFloat64(b.gw.m.exhausted.WithLabelValues("up/a")); got != tc.exhausted {
					t.Errorf("loopctl_retry_budget_exhausted_total{model=up/a} %v, want %v", got, tc.exhausted)
				}
				if got := managers(b.gw)["solo"].Snapshot().ConsecutiveFailures; tc.verdicts != 0 && got != tc.verdicts {
					t.Errorf("the primary failed %d turns, want %d (one verdict per try with a rate window)", got, tc.verdicts)
				}
			})
		})
	}
}

// The rev 4 keys parse into the config and the breaker's settings.
func TestWindowKeys(t *testing.T) {
	c, err := ParseConfig([]byte(`
upstreams: [{name: up, base_url: "http://127.0.0.1:1/v1"}]
models:
  - name: m
    primary: up/a
    breaker: {failure_rate: 0.25, rate_window: 10s, rate_min_calls: 20, slow_call_after: 1s, slow_call_rate: 0.5}
retry: {budget: 0.3, budget_burst: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Breaker{FailureRate: 0.25, RateWindow: 10 * time.Second, RateMinCalls: 20, SlowCallAfter: time.Second, SlowCallRate: 0.5}
	if c.Models[0].Breaker != want || c.Retry.Budget != 0.3 || c.Retry.BudgetBurst != 5 {
		t.Errorf("parsed %+v, %+v", c.Models[0].Breaker, c.Retry)
	}
	for _, tc := range []struct {
		yaml string
		want float64
	}{{"off", RetryBudgetOff}, {"0", RetryBudgetNone}, {"0.0", RetryBudgetNone}, {"2", 2}} {
		c, err := ParseConfig([]byte("upstreams: [{name: up, base_url: 'http://h/v1'}]\nmodels: [{name: m, primary: up/a}]\nretry: {budget: " + tc.yaml + "}"))
		if err != nil || c.Retry.Budget != tc.want {
			t.Errorf("retry.budget: %s: %v, %v; want %v", tc.yaml, c.Retry.Budget, err, tc.want)
		}
	}
}
