package gateway

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// events splits an SSE body into its data payloads.
func events(body string) []string {
	var out []string
	for _, ev := range strings.Split(body, "\n\n") {
		if ev = strings.TrimSpace(ev); ev != "" {
			out = append(out, strings.TrimPrefix(ev, "data: "))
		}
	}
	return out
}

// Each streaming rule of docs/GATEWAY.md: what the client sees, what the breaker
// records, and how many upstream requests it took.
func TestStreamingRules(t *testing.T) {
	ok := llmtest.Chunked("fine ", "answer")
	for _, tc := range []struct {
		name      string
		first     llmtest.Reply // the first upstream answer; later ones are ok
		firstByte time.Duration
		took      time.Duration // on the bubble's clock
		contains  []string
		absent    []string
		done      bool // the client sees [DONE]
		requests  int
		failures  int // the primary's consecutive failures afterwards
		outcome   string
		solo      bool // no chain: a timeout is retried on the same model (SEMANTICS §7.1)
	}{
		{name: "a whole stream", first: ok, contains: []string{`"role":"assistant"`, `"fine "`, `"answer"`, `"finish_reason":"stop"`},
			done: true, requests: 1, outcome: outcomeSuccess},
		{name: "fail at chunk 0: invisible retry", first: llmtest.Streamed(llmtest.StreamCut, 0, "BROKEN"),
			contains: []string{`"fine "`}, absent: []string{"BROKEN", "error"}, done: true, requests: 2, outcome: outcomeSuccess},
		{name: "fail after a role-only chunk: invisible retry", first: llmtest.Streamed(llmtest.StreamCut, 1, "BROKEN"),
			contains: []string{`"fine "`}, absent: []string{"BROKEN", "error"}, done: true, requests: 2, outcome: outcomeSuccess},
		{name: "reset after a role-only chunk: invisible retry", first: llmtest.Streamed(llmtest.StreamReset, 1, "BROKEN"),
			contains: []string{`"fine "`}, absent: []string{"BROKEN", "error"}, done: true, requests: 2, outcome: outcomeSuccess},
		{name: "malformed before content: invisible retry", first: llmtest.Streamed(llmtest.StreamMalformed, 1, "BROKEN"),
			contains: []string{`"fine "`}, absent: []string{"BROKEN", "error"}, done: true, requests: 2, outcome: outcomeSuccess},
		{name: "error event before content: invisible retry", first: llmtest.Streamed(llmtest.StreamError, 1, "BROKEN"),
			contains: []string{`"fine "`}, absent: []string{"BROKEN", "error"}, done: true, requests: 2, outcome: outcomeSuccess},
		{name: "stall before the first byte: first_byte, then retry", first: llmtest.Streamed(llmtest.StreamStall, 0, "BROKEN"), firstByte: 5 * time.Second, solo: true,
			took: 5 * time.Second, contains: []string{`"fine "`}, absent: []string{"BROKEN"}, done: true, requests: 2, outcome: outcomeSuccess},
		{name: "stall after a role-only chunk: first_byte, then retry", first: llmtest.Streamed(llmtest.StreamStall, 1, "BROKEN"), firstByte: 5 * time.Second, solo: true,
			took: 5 * time.Second, contains: []string{`"fine "`}, absent: []string{"BROKEN"}, done: true, requests: 2, outcome: outcomeSuccess},
		{name: "cut after content: error event, no [DONE], a failure", first: llmtest.Streamed(llmtest.StreamCut, 2, "first ", "BROKEN"),
			contains: []string{`"first "`, `"error":{`, `"type":"upstream_error"`}, absent: []string{"BROKEN", "fine"}, requests: 1, failures: 1, outcome: outcomeStreamError},
		{name: "cut mid-chunk after content", first: llmtest.Streamed(llmtest.StreamCutMidEvent, 2, "first ", "BROKEN"),
			contains: []string{`"first "`, `"error":{`}, absent: []string{"BROKEN", "fine"}, requests: 1, failures: 1, outcome: outcomeStreamError},
		{name: "malformed after content", first: llmtest.Streamed(llmtest.StreamMalformed, 2, "first ", "BROKEN"),
			contains: []string{`"first "`, `"error":{`}, absent: []string{"fine", `"choi` + "\n"}, requests: 1, failures: 1, outcome: outcomeStreamError},
		{name: "upstream error event after content is forwarded", first: llmtest.Streamed(llmtest.StreamError, 2, "first ", "BROKEN"),
			contains: []string{`"first "`, `llmtest: the stream failed`}, absent: []string{"fine"}, requests: 1, failures: 1, outcome: outcomeStreamError},
		{name: "hold-back is bounded: 16 empty chunks commit", first: llmtest.Streamed(llmtest.StreamCut, 18, strings.Split(strings.Repeat(",", 20), ",")...),
			contains: []string{`"error":{`}, absent: []string{"fine"}, requests: 1, failures: 1, outcome: outcomeStreamError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := chain()
				if tc.solo {
					cfg.Models = []Model{{Name: "smart", Primary: "up/a"}}
				}
				cfg.Timeouts.FirstByte = tc.firstByte
				b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{"a": llmtest.Sequence(tc.first, ok)}), cfg, Options{})
				var a answer
				took := elapsed(func() { a = b.post(chatBody("smart", true)) })
				if a.status != 200 || a.header.Get("Content-Type") != "text/event-stream" {
					t.Fatalf("status %d %v %s", a.status, a.header, a.body)
				}
				if took != tc.took {
					t.Errorf("took %v, want %v", took, tc.took)
				}
				for _, s := range tc.contains {
					if !strings.Contains(a.body, s) {
						t.Errorf("the client's stream lacks %s:\n%s", s, a.body)
					}
				}
				for _, s := range tc.absent {
					if strings.Contains(a.body, s) {
						t.Errorf("the client's stream has %q:\n%s", s, a.body)
					}
				}
				evs := events(a.body)
				if got := evs[len(evs)-1] == "[DONE]"; got != tc.done {
					t.Errorf("[DONE] at the end: %v, want %v:\n%s", got, tc.done, a.body)
				}
				if n := b.up.Count("a"); n != tc.requests {
					t.Errorf("upstream requests %d, want %d", n, tc.requests)
				}
				snap := managers(b.gw)["smart"].Snapshot()
				if snap.ConsecutiveFailures != tc.failures || snap.State != fallback.Primary {
					t.Errorf("breaker %+v, want %d failures", snap, tc.failures)
				}
				if got := testutil.ToFloat64(b.gw.m.requests.WithLabelValues("chat", "smart", "up/a", tc.outcome)); got != 1 {
					t.Errorf("requests_total{outcome=%q} = %v", tc.outcome, got)
				}
			})
		})
	}
}

// A stream that keeps failing before its first content chunk fails over to
// the chain within the request, invisibly.
func TestStreamFailsOverBeforeContent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{
			"a": llmtest.Always(llmtest.Streamed(llmtest.StreamCut, 1, "BROKEN")),
			"b": llmtest.Always(llmtest.Chunked("from ", "b")),
		}), chain(), Options{})
		a := b.post(chatBody("smart", true))
		if a.header.Get("X-Loopctl-Model") != "up/b" || a.header.Get("X-Loopctl-Attempts") != "4" || strings.Contains(a.body, "BROKEN") || !strings.HasSuffix(a.body, "data: [DONE]\n\n") {
			t.Fatalf("%v\n%s", a.header, a.body)
		}
		if got := testutil.ToFloat64(b.gw.m.fallbacks.WithLabelValues("smart", "up/a", "up/b")); got != 1 {
			t.Errorf("fallbacks_total = %v", got)
		}
	})
}

// A client that goes away mid-stream cancels the upstream request and
// counts nothing against the model.
func TestStreamClientDisconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resume := make(chan struct{})
		rep := llmtest.Chunked("first ", "never")
		rep.StreamFault = &llmtest.StreamFault{At: 2, Kind: llmtest.StreamPause, Resume: resume}
		b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{"a": llmtest.Always(rep)}), chain(), Options{})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		a := b.do(ctx, chatBody("smart", true))
		if !strings.Contains(a.body, `"first "`) || strings.Contains(a.body, "never") || strings.Contains(a.body, "error") {
			t.Errorf("client saw %s", a.body)
		}
		if snap := managers(b.gw)["smart"].Snapshot(); snap.ConsecutiveFailures != 0 {
			t.Errorf("breaker %+v", snap)
		}
		if m := scrape(b.gw); !strings.Contains(m, `loopctl_calls_total{breaker="smart",kind="model",outcome="cancel"} 1`) {
			t.Errorf("no cancel in calls_total:\n%s", m)
		}
		close(resume)
	})
}

// A client that goes away while the upstream hangs cancels it: no verdict.
func TestClientDisconnectCancelsUpstream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{"a": llmtest.Always(llmtest.Hang())}), chain(), Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		b.do(ctx, chatBody("smart", false))
		synctest.Wait()
		if snap := managers(b.gw)["smart"].Snapshot(); snap.ConsecutiveFailures != 0 || b.up.Count("a") != 1 {
			t.Errorf("breaker %+v, %d requests", snap, b.up.Count("a"))
		}
		if got := testutil.ToFloat64(b.gw.m.requests.WithLabelValues("chat", "smart", "up/a", outcomeCancel)); got != 1 {
			t.Errorf("requests_total{outcome=cancel} = %v", got)
		}
	})
}
