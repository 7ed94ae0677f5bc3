package gateway

import (
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// SEMANTICS §7 in the gateway: each row on a scripted upstream, on the
// bubble's clock (synctest), so "at once" means no time passed.
func TestTimeToServe(t *testing.T) {
	throttle := llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{"Retry-After": {"5"}}}}
	quota := llmtest.Raw(429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`)
	overload := llmtest.Raw(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	healthy := llmtest.Always(llmtest.Text("from b"))
	for _, tc := range []struct {
		name     string
		a, b     llmtest.Script
		cfg      func(*Config)
		hdr      []string
		status   int
		took     time.Duration
		retry    string // Retry-After
		reqA     int    // requests that reached the primary
		state    fallback.State
		attempts string
	}{
		{name: "429 + Retry-After 5: the backup at once", a: llmtest.Always(throttle), b: healthy,
			status: 200, reqA: 1, state: fallback.Primary, attempts: "2"},
		{name: "quota: trips at once, the backup at once", a: llmtest.Always(quota), b: healthy,
			status: 200, reqA: 1, state: fallback.Fallback, attempts: "2"},
		{name: "overload (529): the backup at once", a: llmtest.Always(overload), b: healthy,
			status: 200, reqA: 1, state: fallback.Primary, attempts: "2"},
		{name: "hang: one first_byte timeout, not retried, then the backup", a: llmtest.Always(llmtest.Hang()), b: healthy,
			cfg:    func(c *Config) { c.Timeouts.FirstByte = 3 * time.Second },
			status: 200, took: 3 * time.Second, reqA: 1, state: fallback.Primary, attempts: "2"},
		{name: "every model 429: 429 at once with the earliest Retry-After", a: llmtest.Always(throttle), b: llmtest.Always(throttle),
			status: 429, retry: "5", reqA: 1, state: fallback.Primary, attempts: "2"},
		{name: "every model hangs: answered before the client's X-Stainless-Timeout", a: llmtest.Always(llmtest.Hang()), b: llmtest.Always(llmtest.Hang()),
			cfg: func(c *Config) { c.Timeouts.FirstByte = time.Minute }, hdr: []string{"X-Stainless-Timeout", "2"},
			status: 502, took: 1900 * time.Millisecond, reqA: 1, state: fallback.Primary, attempts: "1"},
		{name: "timeouts.total bounds the request", a: llmtest.Always(llmtest.Hang()), b: llmtest.Always(llmtest.Hang()),
			cfg:    func(c *Config) { c.Timeouts.FirstByte = time.Minute; c.Timeouts.Total = 10 * time.Second },
			status: 502, took: 9500 * time.Millisecond, reqA: 1, state: fallback.Primary, attempts: "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := Config{Models: []Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b"}}}}
				if tc.cfg != nil {
					tc.cfg(&cfg)
				}
				b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{"a": tc.a, "b": tc.b}), cfg, Options{})
				var a answer
				took := elapsed(func() { a = b.post(chatBody("smart", false), tc.hdr...) })
				if a.status != tc.status {
					t.Fatalf("status %d, want %d: %v %s", a.status, tc.status, a.header, a.body)
				}
				if took != tc.took {
					t.Errorf("took %v, want %v", took, tc.took)
				}
				if got := a.header.Get("Retry-After"); got != tc.retry {
					t.Errorf("Retry-After %q, want %q", got, tc.retry)
				}
				if tc.retry != "" && a.header.Get("Retry-After-Ms") == "" {
					t.Error("no retry-after-ms")
				}
				if got := b.up.Count("a"); got != tc.reqA {
					t.Errorf("the primary got %d requests, want %d", got, tc.reqA)
				}
				if got := managers(b.gw)["smart"].State(); got != tc.state {
					t.Errorf("breaker %v, want %v", got, tc.state)
				}
				if got := a.header.Get("X-Loopctl-Attempts"); tc.attempts != "" && got != tc.attempts {
					t.Errorf("attempts %s, want %s", got, tc.attempts)
				}
			})
		})
	}
}

// With no other model, a rate limit is waited out, but never longer in
// total than retry.rate_limit_wait: then 429 with Retry-After.
func TestRateLimitWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		short := llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{"Retry-After-Ms": {"300"}}}}
		cfg := Config{Models: []Model{{Name: "solo", Primary: "up/a", Attempts: 1}}, Retry: Retry{RateLimitWait: time.Second}}
		b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{"a": llmtest.Always(short)}), cfg, Options{})
		var a answer
		took := elapsed(func() { a = b.post(chatBody("solo", false)) })
		// Waits of 300ms each: three fit in 1s, the fourth would pass it.
		if a.status != 429 || took > time.Second || b.up.Count("a") != 4 {
			t.Errorf("status %d after %v and %d requests, want 429 within 1s after 4", a.status, took, b.up.Count("a"))
		}
		if a.header.Get("Retry-After") == "" {
			t.Error("no Retry-After")
		}
	})
}

// The new keys of GATEWAY.md rev 2 §2 parse, and a bad value names its key.
func TestTimeKeys(t *testing.T) {
	c, err := ParseConfig([]byte(`
upstreams: [{name: up, base_url: "http://127.0.0.1:1/v1"}]
models:
  - name: m
    primary: up/a
    breaker: {quota_cooldown: 2m}
retry: {rate_limit_retries: 0, rate_limit_wait: 0s}
timeouts: {total: 30s}
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Models[0].Breaker.QuotaCooldown != 2*time.Minute || c.Retry.RateLimitRetries != -1 || c.Retry.RateLimitWait != -1 || c.Timeouts.Total != 30*time.Second {
		t.Errorf("parsed %+v %+v %+v", c.Models[0].Breaker, c.Retry, c.Timeouts)
	}
	_, err = ParseConfig([]byte("timeouts: {total: -1s}\n"))
	if err == nil || !strings.Contains(err.Error(), "timeouts.total") {
		t.Errorf("negative total: %v", err)
	}
}

func TestClientTimeout(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"600", 600 * time.Second, true}, {"1.5", 1500 * time.Millisecond, true}, {"2s", 2 * time.Second, true},
		{"", 0, false}, {"0", 0, false}, {"-3", 0, false}, {"soon", 0, false}, {"1e99", 0, false},
	} {
		got, ok := clientTimeout(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("clientTimeout(%q) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// Hedging (SEMANTICS §7.4): a silent primary is hedged after hedge_after,
// the backup's answer is served, the primary's attempt is cancelled and
// counted as a slow call, so it trips after trip_threshold hedged requests
// and then costs nothing; the budget bounds the hedges.
func TestHedging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{Models: []Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b"}, HedgeAfter: 500 * time.Millisecond}},
			Timeouts: Timeouts{FirstByte: time.Minute}}
		b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{"a": llmtest.Always(llmtest.Hang()), "b": llmtest.Always(llmtest.Text("from b"))}), cfg, Options{})
		for i := range 3 {
			var a answer
			took := elapsed(func() { a = b.post(chatBody("smart", i%2 == 1)) })
			if a.status != 200 || !strings.Contains(a.body, "from b") || took != 500*time.Millisecond || a.header.Get("X-Loopctl-Model") != "up/b" {
				t.Fatalf("request %d: %d after %v, %v %s", i, a.status, took, a.header, a.body)
			}
		}
		mgr := managers(b.gw)["smart"]
		if st := mgr.State(); st != fallback.Fallback {
			t.Errorf("after 3 hedged requests the primary is %v, want tripped", st)
		}
		var a answer
		took := elapsed(func() { a = b.post(chatBody("smart", false)) })
		if a.status != 200 || took != 0 || b.up.Count("a") != 3 {
			t.Errorf("after the trip: %d after %v, primary requests %d, want 3", a.status, took, b.up.Count("a"))
		}
		won := testutil.ToFloat64(b.gw.m.hedges.WithLabelValues("smart", "won"))
		started := testutil.ToFloat64(b.gw.m.hedges.WithLabelValues("smart", "started"))
		if won != 3 || started != 3 {
			t.Errorf("hedges started %v, won %v; want 3, 3", started, won)
		}
	})
}

// The hedge budget: with the bucket spent, a slow primary is waited for.
func TestHedgeBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slowA := func(llmtest.Request) llmtest.Reply {
			gate := make(chan struct{})
			time.AfterFunc(800*time.Millisecond, func() { close(gate) })
			return llmtest.Reply{Text: "from a", Gate: gate}
		}
		cfg := Config{Models: []Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b"}, HedgeAfter: 500 * time.Millisecond,
			Breaker: Breaker{TripThreshold: 100}}}}
		b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{"a": slowA, "b": llmtest.Always(llmtest.Text("from b"))}), cfg, Options{})
		hedged := 0
		for range 14 {
			if a := b.post(chatBody("smart", false)); strings.Contains(a.body, "from b") {
				hedged++
			}
		}
		// The bucket starts at 10 and gains 0.1 a request: 11 hedges in 14.
		if hedged != 11 {
			t.Errorf("%d of 14 requests hedged, want 11", hedged)
		}
	})
}
