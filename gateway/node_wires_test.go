package gateway

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// weather is the healthy backup of the real-client tests: a tool call when
// tools are offered, the answer once the tool's result is back, text
// otherwise.
func weather(r llmtest.Request) llmtest.Reply {
	switch {
	case r.Last().Role == "tool":
		return llmtest.Chunked("the weather ", "is sunny")
	case len(r.Tools) > 0:
		return llmtest.Calls(llmtest.Call(r.Tools[0].Name, `{"city":"Paris"}`))
	}
	return llmtest.Chunked("hello ", "from b")
}

// The real Node clients of the other wires (pinned in
// testdata/node/package-lock.json) against the gateway, each model's
// primary failing (500, 529, 429, a stream broken after content) with a
// healthy backup: the official openai client (responses, embeddings,
// models.retrieve), @openai/agents with its default settings running a
// tool-calling agent, @anthropic-ai/sdk (messages, streaming, tool use,
// countTokens) and the Vercel AI SDK's @ai-sdk/anthropic provider.
func TestNodeWires(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js (Debian: apt-get install -y nodejs npm), then run `npm ci` in gateway/testdata/node")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "node"))
	for _, pkg := range []string{"openai", "@openai/agents", "@anthropic-ai/sdk", "@ai-sdk/anthropic", "ai"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("the %s npm package is not installed: run `npm ci` in %s (test.sh does it for every committed package-lock.json)", pkg, dir)
		}
	}
	limited := llmtest.Always(llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{"Retry-After-Ms": {"1"}}}})
	scripts := map[string]llmtest.Script{
		"a500": llmtest.Always(llmtest.Error(500)),
		"a529": llmtest.Always(llmtest.Error(529)),
		"a429": limited,
		"b":    weather,
	}
	models := []Model{
		{Name: "gpt", Primary: "up/a500", Chain: []string{"up/b"}},
		{Name: "gpt-limited", Primary: "up/a429", Chain: []string{"up/b"}},
		{Name: "gpt-cut", Primary: "up/cut"},
		{Name: "claude", Primary: "an/a500", Chain: []string{"an/b"}},
		{Name: "claude-overloaded", Primary: "an/a529", Chain: []string{"an/b"}},
		{Name: "claude-limited", Primary: "an/a429", Chain: []string{"an/b"}},
		{Name: "claude-cut", Primary: "an/cut"},
		{Name: "claude-ok", Primary: "an/b"},
	}
	// "cut" breaks after its first content, on either wire.
	scripts["cut"] = func(r llmtest.Request) llmtest.Reply {
		at := 5 // Responses: after the first output_text.delta
		if r.Endpoint == "messages" {
			at = 4 // Messages: after the first content_block_delta
		}
		return llmtest.Streamed(llmtest.StreamCut, at, "first ", "never")
	}
	f := newWiresWith(t, scripts, Config{
		ClientKeys: []ClientKey{{Name: "node", Key: "sk-node"}},
		Models:     models,
		Retry:      Retry{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
	}, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, node, "--test", "wires.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"LOOPCTL_GATEWAY="+f.srv.URL, "LOOPCTL_GATEWAY_KEY=sk-node",
		// the Agents SDK's default client reads these; no tracing export
		"OPENAI_BASE_URL="+f.srv.URL+"/v1", "OPENAI_API_KEY=sk-node", "OPENAI_AGENTS_DISABLE_TRACING=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("%s(%.1fs)", out, time.Since(start).Seconds())
	if strings.Contains(string(out), "# fail 0") == false {
		t.Errorf("node reported failures")
	}
}
