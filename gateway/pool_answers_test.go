package gateway

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// wireRequests are a request for model on each client wire: its path and
// body.
func wireRequests(model string) map[string][2]string {
	return map[string][2]string{
		"chat":      {"/v1/chat/completions", chatBody(model, false)},
		"responses": {"/v1/responses", `{"model":"` + model + `","input":"hi"}`},
		"messages":  {"/v1/messages", `{"model":"` + model + `","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`},
	}
}

// errorCode returns an error body's error.type and error.code (OpenAI's
// shape and Anthropic's).
func errorCode(body string) (typ, code string) {
	var e struct {
		Error struct{ Type, Code string } `json:"error"`
	}
	_ = json.Unmarshal([]byte(body), &e)
	return e.Error.Type, e.Error.Code
}

// unavailableRow is a case of TestPoolUnavailableRows.
type unavailableRow struct {
	name       string
	a, b       llmtest.Reply
	prime      int // requests that put every member out
	status     int
	typ, code  string
	msgStatus  int // on the Messages wire
	msgType    string
	retryAfter string
	retryMs    string
}

func TestPoolUnavailableRows(t *testing.T) {
	for _, tc := range []unavailableRow{
		{
			name: "every member out for a hint: 429 pool_rate_limited", a: llmtest.RateLimit("7"), b: llmtest.RateLimit("9"), prime: 1,
			status: 429, typ: "rate_limit_error", code: "pool_rate_limited", msgStatus: 429, msgType: "rate_limit_error",
			retryAfter: "7", retryMs: "7000",
		},
		{
			name: "every member tripped: 503 pool_unavailable", a: llmtest.Error(500), b: llmtest.Error(502), prime: 2,
			status: 503, typ: "pool_unavailable", code: "pool_unavailable", msgStatus: 529, msgType: "overloaded_error",
			retryAfter: "30", retryMs: "30000",
		},
	} {
		for wireName, req := range wireRequests("solo") {
			t.Run(tc.name+"/"+wireName, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) { checkUnavailableRow(t, tc, wireName, req) })
			})
		}
	}
}

// checkUnavailableRow puts every member of a pool out as tc says and
// checks the answer of req on the wire wireName.
func checkUnavailableRow(t *testing.T, tc unavailableRow, wireName string, req [2]string) {
	cfg := Config{
		Pools:  []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "b/m"}}, Breaker: Breaker{TripThreshold: 2}}},
		Models: []Model{{Name: "solo", Primary: "pool/p", Breaker: Breaker{TripThreshold: 5}}},
	}
	p := newPoolGW(t, cfg, Options{}, deployment{name: "a", script: llmtest.Always(tc.a)}, deployment{name: "b", script: llmtest.Always(tc.b)})
	for range tc.prime {
		p.chat("solo", false)
	}
	before := managers(p.gw)["solo"].Snapshot()
	sent := p.count("a") + p.count("b")
	ans := p.do(context.Background(), req[0], req[1])
	status, typ, code := tc.status, tc.typ, tc.code
	if wireName == "messages" {
		status, typ, code = tc.msgStatus, tc.msgType, ""
	}
	gotType, gotCode := errorCode(ans.body)
	if ans.status != status || gotType != typ || gotCode != code {
		t.Fatalf("%d %s/%s, want %d %s/%s: %s", ans.status, gotType, gotCode, status, typ, code, ans.body)
	}
	if got := ans.header.Get("Retry-After"); got != tc.retryAfter {
		t.Errorf("Retry-After %q, want %q", got, tc.retryAfter)
	}
	if got := ans.header.Get("Retry-After-Ms"); got != tc.retryMs {
		t.Errorf("retry-after-ms %q, want %q", got, tc.retryMs)
	}
	if got := ans.header.Get("X-Loopctl-Skipped"); got != "pool/p=unavailable" {
		t.Errorf("x-loopctl-skipped %q, want pool/p=unavailable", got)
	}
	if got := p.count("a") + p.count("b"); got != sent {
		t.Errorf("%d member requests were sent for an unavailable pool", got-sent)
	}
	if after := managers(p.gw)["solo"].Snapshot(); after.ConsecutiveFailures != before.ConsecutiveFailures || after.State != before.State {
		t.Errorf("the model breaker went from %v/%d to %v/%d: the pool row counts against no model",
			before.State, before.ConsecutiveFailures, after.State, after.ConsecutiveFailures)
	}
}

func TestPoolUnavailableAfterMembersTriedIsTheLastFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := Config{
			Pools:  []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "b/m"}}}},
			Models: []Model{{Name: "solo", Primary: "pool/p", Breaker: Breaker{TripThreshold: 5}}},
		}
		p := newPoolGW(t, cfg, Options{}, down("a", 500), down("b", 500))
		ans := p.chat("solo", false)
		if typ, _ := errorCode(ans.body); ans.status != 502 || typ != "upstream_error" {
			t.Fatalf("%d %s, want the last failure's row: 502 upstream_error", ans.status, ans.body)
		}
		if got := ans.header.Get("X-Loopctl-Attempts"); got != "2" {
			t.Errorf("x-loopctl-attempts %q, want 2", got)
		}
		if s := managers(p.gw)["solo"].Snapshot(); s.State != fallback.Primary || s.ConsecutiveFailures != 1 {
			t.Errorf("the model breaker is %v/%d, want one failure", s.State, s.ConsecutiveFailures)
		}
	})
}

func TestPoolNoMemberCanEverServeIs400(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Every member is an anthropic upstream: chat's n = 2 cannot reach
		// one (§8.3), so no entry and no member could ever serve it.
		cfg := Config{
			Pools:  []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "b/m"}}}},
			Models: []Model{{Name: "solo", Primary: "pool/p"}},
		}
		p := newPoolGW(t, cfg, Options{},
			deployment{name: "a", anthropic: true, script: llmtest.Always(llmtest.Text("x"))},
			deployment{name: "b", anthropic: true, script: llmtest.Always(llmtest.Text("x"))})
		ans := p.do(context.Background(), "/v1/chat/completions", `{"model":"solo","n":2,"messages":[{"role":"user","content":"hi"}]}`)
		if typ, _ := errorCode(ans.body); ans.status != 400 || typ != "invalid_request_error" {
			t.Fatalf("%d %s, want 400 invalid_request_error naming n", ans.status, ans.body)
		}
		if got := ans.header.Get("X-Loopctl-Skipped"); got != "pool/p=n" {
			t.Errorf("x-loopctl-skipped %q, want pool/p=n", got)
		}
		if p.count("a")+p.count("b") != 0 {
			t.Error("a member was sent a request it cannot serve")
		}
	})
}
