package mcptool_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/mcptool"
	"github.com/loopctl/loopctl-go/provider/openai"
)

// everythingDir holds the pinned @modelcontextprotocol/server-everything
// (test.sh runs npm ci there).
const everythingDir = "testdata/everything"

// TestGuideAgentTools runs the MCP guide's snippet (docs/mcp.md): the
// official reference server started with npx, its tools as agent tools
// behind their own breakers, and an agent whose model calls its echo tool.
// It runs in everythingDir, so npx finds the pinned server there and needs
// no network.
func TestGuideAgentTools(t *testing.T) {
	if _, err := exec.LookPath("npx"); err != nil {
		t.Fatalf("npx is not installed: install Node.js 18 or later (Debian: apt-get install nodejs npm), then run `npm ci` in mcptool/%s", everythingDir)
	}
	if _, err := os.Stat(filepath.Join(everythingDir, "node_modules/@modelcontextprotocol/server-everything")); err != nil {
		t.Fatalf("the MCP reference server is not installed: run `(cd mcptool/%s && npm ci)` (test.sh does it): %v", everythingDir, err)
	}
	t.Chdir(everythingDir)
	srv := llmtest.NewOpenAI(func(r llmtest.Request) llmtest.Reply {
		if r.Last().Role != "tool" {
			return llmtest.Calls(llmtest.Call("everything__echo", `{"message":"hello"}`))
		}
		return llmtest.Text(r.Last().Content)
	})
	defer srv.Close()
	defer srv.CloseClientConnections()
	p, err := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	models := fallback.Settings{Primary: "gpt-a"}
	ctx := context.Background()

	var answer string
	run := func() error {
		up, err := mcptool.NewUpstream(mcptool.UpstreamConfig{
			Name:    "everything",
			Connect: mcptool.Command(mcptool.CommandOptions{}, "npx", "-y", "@modelcontextprotocol/server-everything"),
		})
		if err != nil {
			return err
		}
		up.Start(ctx)
		defer up.Close()
		up.WaitFirst(ctx)
		a, err := agent.New(agent.Config{Provider: p, Models: models, Tools: mcptool.AgentTools(up, mcptool.AgentOptions{})})
		if err != nil {
			return err
		}
		res, err := a.Run(ctx, []agent.Message{{Role: agent.RoleUser, Content: "echo hello"}})
		if err != nil {
			return err
		}
		answer = res.Answer
		return nil
	}
	if err := run(); err != nil {
		t.Fatal(err)
	}
	if answer != "Echo: hello" {
		t.Errorf("answer %q, want the echo tool's result %q", answer, "Echo: hello")
	}
}
