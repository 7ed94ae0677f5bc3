package main

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/gateway"
)

func TestClaudeCodeRequest(t *testing.T) {
	c := claudeCodeConversation()
	for _, tc := range []struct {
		name     string
		body     []byte
		min, max int
	}{
		{name: "messages", body: c.messagesBody("bench", false), min: 90_000, max: 115_000},
		{name: "chat", body: c.chatBody("bench", false), min: 90_000, max: 115_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := len(tc.body); n < tc.min || n > tc.max {
				t.Errorf("%d bytes, want %d..%d", n, tc.min, tc.max)
			}
			var req struct {
				Tools    []json.RawMessage `json:"tools"`
				Messages []json.RawMessage `json:"messages"`
			}
			if err := json.Unmarshal(tc.body, &req); err != nil {
				t.Fatal(err)
			}
			if len(req.Tools) != 40 || len(req.Messages) < 30 {
				t.Errorf("%d tools, %d messages; want 40, at least 30", len(req.Tools), len(req.Messages))
			}
			if streaming(tc.body) {
				t.Error("a non-streaming body reads as a stream to the upstream")
			}
			if same := c.messagesBody("bench", false); tc.name == "messages" && string(same) != string(tc.body) {
				t.Error("the request is not the same on every call")
			}
		})
	}
	msgs := string(c.messagesBody("bench", false))
	if n, m := strings.Count(msgs, `"type":"tool_use"`), strings.Count(msgs, `"type":"tool_result"`); n != 16 || m != 16 {
		t.Errorf("%d tool_use and %d tool_result blocks, want 16 pairs", n, m)
	}
}

// TestTranslatedProbes has every probe of the translated-requests
// measurement answer correctly through the gateway in process, against the
// scripted upstream, with the routes loopctl serve gets in the benchmark.
func TestTranslatedProbes(t *testing.T) {
	up := httptest.NewServer(upstream{})
	defer up.Close()
	gw, err := gateway.New(gateway.Config{
		Upstreams: []gateway.Upstream{
			{Name: "up", BaseURL: up.URL + "/v1"},
			{Name: "an", API: "anthropic", BaseURL: up.URL},
		},
		Models: []gateway.Model{{Name: "bench", Primary: "up/bench-model"}, {Name: "bench-messages", Primary: "an/bench-model"}},
	}, gateway.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	srv := httptest.NewServer(gw)
	defer srv.Close()
	for _, g := range translatedGroups(up.URL, srv.URL) {
		for _, p := range g.probes {
			t.Run(g.title+"/"+p.name, func(t *testing.T) {
				if _, err := p.send(newClient()); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}
