package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// rateLimit is a 429 whose hint (1 ms) keeps the ladder's waits short.
func rateLimit() llmtest.Reply {
	return llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{"Retry-After-Ms": {"1500"}}}}
}

// Each row of docs/GATEWAY.md §4, as the client sees it.
func TestFailureTable(t *testing.T) {
	solo := Config{Models: []Model{{Name: "solo", Primary: "up/a"}}}
	for _, tc := range []struct {
		name     string
		cfg      Config
		scripts  map[string]llmtest.Script
		body     string
		hdr      []string
		status   int
		errType  string // error.type, or "" for a pass-through or success
		code     string // error.code
		body2    string // the body contains
		retry    string // Retry-After
		attempts string
		model    string
		counts   map[string]int // upstream requests per model
		state    fallback.State // of the first model's breaker afterwards
	}{
		{
			name: "5xx, all fail: 502 after walking the chain", cfg: chain(),
			scripts: map[string]llmtest.Script{"a": llmtest.Always(llmtest.Error(500)), "b": llmtest.Always(llmtest.Error(502)), "c": llmtest.Always(llmtest.Error(504))},
			status:  502, errType: "upstream_error", attempts: "7", model: "up/c",
			counts: map[string]int{"a": 12, "b": 8, "c": 8}, state: fallback.Fallback,
		},
		{
			name: "5xx then the chain serves", cfg: chain(),
			scripts: map[string]llmtest.Script{"a": llmtest.Always(llmtest.Error(503)), "b": llmtest.Always(llmtest.Text("from b"))},
			status:  200, body2: "from b", attempts: "4", model: "up/b",
			counts: map[string]int{"a": 12, "b": 1}, state: fallback.Fallback,
		},
		{
			name: "408 and connection reset are transient", cfg: chain(),
			scripts: map[string]llmtest.Script{"a": llmtest.Sequence(llmtest.Error(408), llmtest.Malformed(), llmtest.Text("third time"))},
			status:  200, body2: "third time", attempts: "1", model: "up/a",
			counts: map[string]int{"a": 3}, state: fallback.Primary,
		},
		{
			name: "429 everywhere: 429 with Retry-After", cfg: solo,
			scripts: map[string]llmtest.Script{"a": llmtest.Always(rateLimit())},
			// SEMANTICS §7.1: no other model is usable, and the hint (1.5s)
			// is past retry.rate_limit_wait (1s): the attempt escalates at
			// once, and the model is not tried again within the request.
			status: 429, errType: "rate_limit_error", code: "rate_limit_exceeded", retry: "2", attempts: "1", model: "up/a",
			counts: map[string]int{"a": 1}, state: fallback.Primary,
		},
		{
			// SEMANTICS §7.1: fail over rather than wait: one request to
			// the rate-limited primary, then the chain at once.
			name: "429 fails over at once, the chain serves", cfg: chain(),
			scripts: map[string]llmtest.Script{"a": llmtest.Always(rateLimit()), "b": llmtest.Always(llmtest.Text("from b"))},
			status:  200, body2: "from b", attempts: "2", model: "up/b",
			counts: map[string]int{"a": 1, "b": 1}, state: fallback.Primary,
		},
		{
			name: "400 passes through, no verdict", cfg: chain(),
			scripts: map[string]llmtest.Script{"a": llmtest.Always(llmtest.Raw(400, `{"error":{"message":"too long","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`))},
			status:  400, body2: `"code":"context_length_exceeded"`, attempts: "1", model: "up/a",
			counts: map[string]int{"a": 1}, state: fallback.Primary,
		},
		{
			name: "413 passes through", cfg: chain(),
			scripts: map[string]llmtest.Script{"a": llmtest.Always(llmtest.Raw(413, `{"error":{"message":"big"}}`))},
			status:  413, body2: `{"error":{"message":"big"}}`, attempts: "1", model: "up/a", counts: map[string]int{"a": 1}, state: fallback.Primary,
		},
		{
			name: "422 passes through", cfg: chain(),
			scripts: map[string]llmtest.Script{"a": llmtest.Always(llmtest.Raw(422, `{"error":{"message":"bad"}}`))},
			status:  422, body2: `{"error":{"message":"bad"}}`, attempts: "1", model: "up/a", counts: map[string]int{"a": 1}, state: fallback.Primary,
		},
		{
			name: "401 everywhere: 502 upstream_auth_error", cfg: chain(),
			scripts: map[string]llmtest.Script{"a": llmtest.Always(llmtest.Error(401)), "b": llmtest.Always(llmtest.Error(403)), "c": llmtest.Always(llmtest.Error(401))},
			status:  502, errType: "upstream_auth_error", attempts: "7", model: "up/c",
			counts: map[string]int{"a": 3, "b": 2, "c": 2}, state: fallback.Fallback,
		},
		{
			name: "404 everywhere: 502 upstream_model_not_found", cfg: solo,
			scripts: map[string]llmtest.Script{},
			status:  502, errType: "upstream_model_not_found", attempts: "4", model: "up/a",
			counts: map[string]int{"a": 4}, state: fallback.Fallback,
		},
		{
			name: "403 on the primary, the chain serves", cfg: chain(),
			scripts: map[string]llmtest.Script{"a": llmtest.Always(llmtest.Error(403)), "b": llmtest.Always(llmtest.Text("from b"))},
			status:  200, body2: "from b", attempts: "4", model: "up/b",
			counts: map[string]int{"a": 3, "b": 1}, state: fallback.Fallback,
		},
		{
			name: "bad JSON", cfg: chain(), body: `{"model":"smart",`,
			status: 400, errType: "invalid_request_error", counts: map[string]int{}, state: fallback.Primary,
		},
		{
			name: "no model", cfg: chain(), body: `{"messages":[]}`,
			status: 400, errType: "invalid_request_error", counts: map[string]int{}, state: fallback.Primary,
		},
		{
			name: "body over max_body", cfg: Config{Models: chain().Models, Limits: Limits{MaxBody: 64}},
			body:   `{"model":"smart","messages":[{"role":"user","content":"` + strings.Repeat("x", 100) + `"}]}`,
			status: 413, errType: "invalid_request_error", counts: map[string]int{}, state: fallback.Primary,
		},
		{
			name: "unknown model", cfg: chain(), body: chatBody("smrt", false),
			status: 404, errType: "invalid_request_error", code: "model_not_found", counts: map[string]int{}, state: fallback.Primary,
		},
		{
			name: "unknown upstream in the direct form", cfg: chain(), body: chatBody("nope/a", false),
			status: 404, code: "model_not_found", errType: "invalid_request_error", counts: map[string]int{}, state: fallback.Primary,
		},
		{
			name: "missing key", cfg: withKeys(chain()),
			status: 401, errType: "authentication_error", counts: map[string]int{}, state: fallback.Primary,
		},
		{
			name: "wrong key", cfg: withKeys(chain()), hdr: []string{"Authorization", "Bearer sk-client-wrong"},
			status: 401, errType: "authentication_error", counts: map[string]int{}, state: fallback.Primary,
		},
		{
			name: "right key", cfg: withKeys(chain()), hdr: []string{"Authorization", "Bearer sk-client"},
			scripts: map[string]llmtest.Script{"a": llmtest.Always(llmtest.Text("ok"))},
			status:  200, body2: "ok", attempts: "1", model: "up/a", counts: map[string]int{"a": 1}, state: fallback.Primary,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := newBubble(t, llmtest.ByModel(tc.scripts), tc.cfg, Options{})
				body := tc.body
				if body == "" {
					body = chatBody(tc.cfg.Models[0].Name, false)
				}
				a := b.post(body, tc.hdr...)
				if a.status != tc.status {
					t.Fatalf("status %d, want %d: %s", a.status, tc.status, a.body)
				}
				if got, _ := a.errorField("type").(string); got != tc.errType && tc.errType != "" {
					t.Errorf("error.type %q, want %q (%s)", got, tc.errType, a.body)
				}
				if got, _ := a.errorField("code").(string); tc.code != "" && got != tc.code {
					t.Errorf("error.code %q, want %q", got, tc.code)
				}
				if tc.errType != "" && a.header.Get("Content-Type") != "application/json" {
					t.Errorf("Content-Type %q", a.header.Get("Content-Type"))
				}
				if !strings.Contains(a.body, tc.body2) {
					t.Errorf("body %s, want it to contain %s", a.body, tc.body2)
				}
				if got := a.header.Get("Retry-After"); got != tc.retry {
					t.Errorf("Retry-After %q, want %q", got, tc.retry)
				}
				if got := a.header.Get("X-Loopctl-Attempts"); got != tc.attempts && tc.attempts != "" {
					t.Errorf("x-loopctl-attempts %q, want %q", got, tc.attempts)
				}
				if got := a.header.Get("X-Loopctl-Model"); got != tc.model {
					t.Errorf("x-loopctl-model %q, want %q", got, tc.model)
				}
				for m, n := range tc.counts {
					if got := b.up.Count(m); got != n {
						t.Errorf("upstream model %s got %d requests, want %d", m, got, n)
					}
				}
				if total := b.up.Count(""); len(tc.counts) == 0 && total != 0 {
					t.Errorf("the upstream got %d requests, want none", total)
				}
				if got := managers(b.gw)[tc.cfg.Models[0].Name].State(); got != tc.state {
					t.Errorf("breaker state %v, want %v", got, tc.state)
				}
			})
		})
	}
}

func withKeys(c Config) Config {
	c.ClientKeys = []ClientKey{{Name: "team-a", Key: "sk-client"}}
	return c
}

// A spent chain answers 503 fallback_exhausted at once, with Retry-After
// in whole seconds (rounded up) until the primary may be probed.
func TestExhaustedRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, llmtest.ByModel(nil), chain(), Options{})
		if a := b.post(chatBody("smart", false)); a.status != 502 {
			t.Fatalf("walking the chain: %d %s", a.status, a.body)
		}
		n := b.up.Count("")
		time.Sleep(20*time.Second + 300*time.Millisecond)
		a := b.post(chatBody("smart", false))
		if a.status != 503 || a.errorField("type") != "fallback_exhausted" || a.errorField("code") != "fallback_exhausted" {
			t.Fatalf("got %d %s", a.status, a.body)
		}
		if got := a.header.Get("Retry-After"); got != "40" {
			t.Errorf("Retry-After %q, want 40 (39.7s rounded up)", got)
		}
		if b.up.Count("") != n {
			t.Error("an exhausted request reached the upstream")
		}
		// Once the cooldown has passed, the next request probes the primary.
		time.Sleep(40 * time.Second)
		a = b.post(chatBody("smart", false))
		// 404 is not retried, and a request holds one probe at most
		// (SEMANTICS §3 rev 3): the failed probe falls through to the chain,
		// which is spent, so the request ends with the probe's failure.
		if b.up.Count("a") != 3+1 || a.status != 502 || a.header.Get("X-Loopctl-Attempts") != "1" {
			t.Errorf("primary requests %d, want 1 probe; %d %v", b.up.Count("a"), a.status, a.header)
		}
	})
}

// A probe turn's request is bounded by the probe's lease.
func TestProbeBoundedByLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{Models: []Model{{Name: "solo", Primary: "up/a", Attempts: 3, Breaker: Breaker{ProbeTimeout: 2 * time.Second}}}, Timeouts: Timeouts{FirstByte: time.Hour}}
		var calls atomic.Int64
		b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{"a": func(llmtest.Request) llmtest.Reply {
			n := calls.Add(1)
			switch {
			case n <= 12:
				return llmtest.Error(500)
			case n == 13:
				return llmtest.Hang()
			}
			return llmtest.Text("recovered")
		}}), cfg, Options{})
		b.post(chatBody("solo", false)) // trips the primary (no chain: keeps routing to it)
		if st := managers(b.gw)["solo"].State(); st != fallback.Fallback {
			t.Fatalf("state %v", st)
		}
		time.Sleep(time.Minute)
		var a answer
		d := elapsed(func() { a = b.do(context.Background(), chatBody("solo", false)) })
		if d != 2*time.Second {
			t.Errorf("the request took %v, want the hung probe cut at its 2s lease", d)
		}
		// One probe per request (SEMANTICS §3 rev 3), and no chain: the
		// request ends with the cut probe's failure; the next one probes.
		if a.status != 502 || a.header.Get("X-Loopctl-Attempts") != "1" {
			t.Errorf("status %d %v %s", a.status, a.header, a.body)
		}
	})
}

// A body of unknown length is cut at max_body too.
func TestBodyLimitWithoutContentLength(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, llmtest.Always(llmtest.Text("x")), Config{Models: chain().Models, Limits: Limits{MaxBody: 64}}, Options{})
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(chatBody("smart", false)+strings.Repeat(" ", 100)))
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		b.gw.ServeHTTP(rec, req)
		if rec.Code != 413 || b.up.Count("") != 0 {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	})
}
