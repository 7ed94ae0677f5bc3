package gateway

import (
	"encoding/json"
	"strings"
	"testing"
)

// GATEWAY §11.3: a request's whole input estimate (§8.8's, one token per 4
// bytes) and its uncached input, the tokens after the last cache_control
// breakpoint, on bodies shaped as Claude Code's.
func TestInputEstimate(t *testing.T) {
	cc := claudeCodeBody(20)
	marker := `"now fix it","cache_control":{"type":"ephemeral"}`
	ccTail := cc[strings.Index(cc, marker)+len(marker):]
	systemOnly := `{"model":"m","system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}}],` +
		`"messages":[{"role":"user","content":"hello there, fix the build"}]}`
	systemTail := `],"messages":[{"role":"user","content":"hello there, fix the build"}]}` // 71 bytes
	for _, tc := range []struct {
		name            string
		body            string
		whole, uncached int64
	}{
		{"empty", "", 0, 0},
		{"space", " \n", 0, 0},
		{"no breakpoint: the whole estimate", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, 57 / 4, 57 / 4},
		{"surrounding space is not counted", "  \n" + `{"model":"m","messages":[{"role":"user","content":"hi"}]}` + "\n", 57 / 4, 57 / 4},
		{"a system breakpoint", systemOnly, int64(len(systemOnly) / 4), int64(len(systemTail) / 4)},
		{"claude code: after the last breakpoint", cc, int64(len(cc) / 4), int64(len(ccTail) / 4)},
		{"a breakpoint at the end: at least 1", `{"model":"m","cache_control":{"type":"ephemeral"}}`, 51 / 4, 1},
		{"spaced key and value", `{"model":"m","messages":[{"content":"x", "cache_control" : { "type" : "ephemeral" } }],"tools":[{"name":"Read"}]}`,
			112 / 4, int64(len(` }],"tools":[{"name":"Read"}]}`) / 4)},
		{"cache_control as a string value marks nothing", `{"model":"m","messages":[{"role":"user","content":"cache_control"}]}`, 68 / 4, 68 / 4},
		{"cache_control inside a string marks nothing", `{"model":"m","messages":[{"role":"user","content":"see \"cache_control\":{\"type\":\"ephemeral\"} here"}]}`, 106 / 4, 106 / 4},
		{"a value that is no object marks nothing: the one before", `{"model":"m","system":[{"text":"s","cache_control":{"type":"ephemeral"}}],"x":{"cache_control":null},"messages":[]}`,
			113 / 4, int64(len(`}],"x":{"cache_control":null},"messages":[]}`) / 4)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := int64(len(strings.TrimSpace(tc.body)) / 4); tc.whole != 0 && n != tc.whole {
				t.Fatalf("the table's whole %d, the body's %d bytes / 4 = %d", tc.whole, len(strings.TrimSpace(tc.body)), n)
			}
			whole, uncached := inputEstimate([]byte(tc.body))
			if whole != tc.whole || uncached != tc.uncached {
				t.Errorf("inputEstimate = %d, %d; want %d, %d", whole, uncached, tc.whole, tc.uncached)
			}
		})
	}
}

// count_tokens answers, for an upstream that has none, the whole estimate a
// pool compares with token headroom: one formula (§8.8).
func TestCountTokensAnswersTheWholeEstimate(t *testing.T) {
	f := newFixture(t, weather, Config{Models: []Model{{Name: "m", Primary: "up/a"}}}, Options{})
	body := strings.Replace(claudeCodeBody(5), `"claude-sonnet-4-5"`, `"m"`, 1)
	req := strings.NewReader(body)
	resp, err := f.srv.Client().Post(f.srv.URL+"/v1/messages/count_tokens", "application/json", req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		InputTokens int64 `json:"input_tokens"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 || resp.Header.Get("X-Loopctl-Estimate") != "true" {
		t.Fatalf("count_tokens: %d %v %v", resp.StatusCode, resp.Header, err)
	}
	if whole, _ := inputEstimate([]byte(body)); got.InputTokens != whole {
		t.Errorf("count_tokens estimated %d tokens, inputEstimate %d", got.InputTokens, whole)
	}
}

// The estimate of a Claude Code body, once per pool request: a backward
// search for the last breakpoint, no allocation.
func BenchmarkInputEstimate(b *testing.B) {
	body := []byte(claudeCodeBody(20))
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		_, _ = inputEstimate(body)
	}
}
