package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// GATEWAY §10.3 with real clients and the real binary: `loopctl serve`
// (built from ./cmd/loopctl) with an Anthropic primary answering 529 and
// its backups on the local Bedrock fake (SigV4 checked on every request,
// eventstream frames) and Vertex fake (behind a local OAuth2 token
// endpoint), and an OpenAI primary failing with an Azure backup (api-key):
// @anthropic-ai/sdk and the openai client (testdata/node/clouds), then
// Claude Code, each through a streamed tool-use round trip; and, as the
// SDK sees them, a Bedrock primary's ThrottlingException,
// ServiceQuotaExceededException and in-stream exception before content
// (each served by the Vertex backup) and after content (the stream's
// error event).
func TestNodeClouds(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js (Debian: apt-get install -y nodejs npm), then run `npm ci` in gateway/testdata/node and gateway/testdata/agents")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "node"))
	for _, pkg := range []string{"openai", "@anthropic-ai/sdk"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("the %s npm package is not installed: run `npm ci` in %s", pkg, dir)
		}
	}
	useFakeAWS(t)
	tokens := newTokenServer(t)
	useServiceAccount(t, tokens)
	script := func(r llmtest.Request) llmtest.Reply {
		switch {
		case strings.HasPrefix(r.Model, "down"):
			return llmtest.Error(map[string]int{"messages": 529}[r.Endpoint] + map[bool]int{true: 500}[r.Endpoint != "messages"])
		case strings.Contains(r.Model, "cc"):
			return agentCLIScript(r)
		}
		return weather(r)
	}
	an, oa := llmtest.NewAnthropic(script), llmtest.NewOpenAI(script)
	t.Cleanup(func() { an.Close(); oa.Close() })
	br := newBedrockFake(t, "us-east-1", script)
	vx := newVertexFake(t, tokens, "loopctl-test", "us-east5", script)
	az := newAzureFake(t, "az-secret", script)
	url := startLoopctl(t, fmt.Sprintf(nodeCloudsConfig, an.BaseURL(), br.URL, vx.URL, oa.BaseURL(), az.base()))

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=tap", filepath.Join("clouds", "clouds.test.mjs"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LOOPCTL_GATEWAY="+url, "LOOPCTL_GATEWAY_KEY=sk-node")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil || !strings.Contains(string(out), "# fail 0") {
		t.Errorf("node --test clouds.test.mjs: %v (its failing cases are above)", err)
	}
	t.Run("claude-code", func(t *testing.T) {
		for _, model := range []string{"cc-bedrock", "cc-vertex"} {
			res, out, err := runClaudeCodeAt(t, url, model)
			if err != nil || res.IsError || !strings.Contains(res.Result, "crosswire-ok") {
				t.Errorf("claude -p --model %s: %v, result %+v, want the Bash tool's output crosswire-ok in the answer\n%s", model, err, res, out)
			}
		}
	})
	streams := 0
	for _, r := range br.log.all() {
		if strings.HasSuffix(r.path, "/invoke-with-response-stream") {
			streams++
		}
	}
	if br.bad != 0 || streams == 0 || vx.unauthorizedSeen != 0 || az.bad != 0 || len(tokens.tokens()) != 1 {
		t.Errorf("bedrock: %d bad signatures, %d streams; vertex: %d unauthorized, tokens %v; azure: %d refused",
			br.bad, streams, vx.unauthorizedSeen, tokens.tokens(), az.bad)
	}
}

// nodeCloudsConfig is TestNodeClouds' config: the Anthropic, Bedrock,
// Vertex, OpenAI and Azure base URLs go in the %s.
const nodeCloudsConfig = `
client_keys: [{name: node, key_env: LOOPCTL_TEST_CLIENT_KEY}]
retry: {max_retries: 0}
upstreams:
  - {name: an, api: anthropic, base_url: %q, api_key_env: LOOPCTL_TEST_AN_KEY}
  - {name: bedrock, api: bedrock, region: us-east-1, base_url: %q}
  - {name: vertex, api: vertex, region: us-east5, project: loopctl-test, base_url: %q}
  - {name: openai, base_url: %q, api_key_env: LOOPCTL_TEST_AN_KEY}
  - {name: azure, base_url: %q, api_key_env: LOOPCTL_TEST_AZ_KEY, auth: {type: api-key}}
models:
  - {name: sdk-bedrock, primary: an/down-sdk, chain: ["bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0"]}
  - {name: sdk-vertex, primary: an/down-sdk, chain: ["vertex/claude-sonnet-4-5@20250929"]}
  - {name: cc-bedrock, primary: an/down-cc, chain: ["bedrock/cc.anthropic.claude-sonnet-4-5-v1:0"]}
  - {name: cc-vertex, primary: an/down-cc, chain: ["vertex/cc-claude-sonnet-4-5@20250929"]}
  - {name: oai-azure, primary: openai/down-gpt, chain: [azure/my-gpt-4-1-deployment]}
  - {name: sdk-throttled, primary: bedrock/err-ThrottlingException-429, chain: ["vertex/claude-sonnet-4-5@20250929"]}
  - {name: sdk-quota, primary: bedrock/err-ServiceQuotaExceededException-429, chain: ["vertex/claude-sonnet-4-5@20250929"]}
  - {name: sdk-early, primary: bedrock/instream-early-throttlingException, chain: ["vertex/claude-sonnet-4-5@20250929"]}
  - {name: sdk-late, primary: bedrock/instream-late-modelStreamErrorException, chain: ["vertex/claude-sonnet-4-5@20250929"]}
`

// startLoopctl builds ./cmd/loopctl and serves config with it on a free
// loopback port until the test ends; it returns the gateway's URL.
func startLoopctl(t *testing.T, config string) string {
	t.Helper()
	dir := t.TempDir()
	bin, cfg := filepath.Join(dir, "loopctl"), filepath.Join(dir, "loopctl.yaml")
	build := exec.Command("go", "build", "-o", bin, "./cmd/loopctl")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/loopctl: %v\n%s", err, out)
	}
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	var logs bytes.Buffer
	cmd := exec.Command(bin, "serve", "--config", cfg, "--listen", addr)
	cmd.Env = append(os.Environ(), "LOOPCTL_TEST_CLIENT_KEY=sk-node", "LOOPCTL_TEST_AN_KEY=sk-an", "LOOPCTL_TEST_AZ_KEY=az-secret")
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if strings.Contains(logs.String(), "sk-an") || strings.Contains(logs.String(), "az-secret") || strings.Contains(logs.String(), fakeAWS.SecretAccessKey) || strings.Contains(logs.String(), "tok-1") {
			t.Errorf("the gateway's log shows a credential:\n%s", logs.String())
		}
		t.Logf("loopctl serve's log:\n%s", logs.String())
	})
	url := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				return url
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("loopctl serve did not get ready:\n%s", logs.String())
		}
	}
}

// runClaudeCodeAt runs Claude Code against the gateway at url with model
// for every role, asking for a Bash tool round trip.
func runClaudeCodeAt(t *testing.T, url, model string) (claudeCodeResult, string, error) {
	_, claude := agentsDir(t, "claude")
	home := t.TempDir()
	work := filepath.Join(home, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	env := quietEnv(home, "ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY=sk-node",
		"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
		"ANTHROPIC_MODEL="+model, "ANTHROPIC_SMALL_FAST_MODEL="+model, "ANTHROPIC_DEFAULT_HAIKU_MODEL="+model,
		"ANTHROPIC_DEFAULT_SONNET_MODEL="+model, "ANTHROPIC_DEFAULT_OPUS_MODEL="+model, "CLAUDE_CODE_SUBAGENT_MODEL="+model,
		"DISABLE_UPDATES=1", "CLAUDE_CODE_MAX_RETRIES=0", "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK=1")
	out, _, err := runCLI(t, work, env, claude, "-p", "Run `echo crosswire-ok` with the Bash tool and tell me what it printed.",
		"--output-format", "json", "--model", model, "--allowedTools", "Bash", "--max-turns", "4")
	var res claudeCodeResult
	if line := lastJSONLine(out); line != "" {
		_ = json.Unmarshal([]byte(line), &res)
	}
	return res, out, err
}
