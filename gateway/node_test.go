package gateway

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// The official openai Node client (pinned in testdata/node/package-lock.json)
// against the gateway while a scripted upstream fails: answers from the
// chain, streaming and not, the error classes and Retry-After.
func TestNodeClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js (Debian: apt-get install -y nodejs npm), then run `npm ci` in gateway/testdata/node")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "node"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai", "package.json")); err != nil {
		t.Fatalf("the openai npm package is not installed: run `npm ci` in %s (test.sh does it for every committed package-lock.json)", dir)
	}
	cfg := Config{
		ClientKeys: []ClientKey{{Name: "node", Key: "sk-node"}},
		Models: []Model{
			{Name: "smart", Primary: "up/a", Chain: []string{"up/b"}},
			{Name: "doomed", Primary: "up/dead", Chain: []string{"up/dead2"}},
			{Name: "limited", Primary: "up/limited", Attempts: 1},
			{Name: "bad", Primary: "up/bad"},
			{Name: "cut", Primary: "up/cut"},
		},
		Retry: Retry{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
	}
	f := newNetFixture(t, llmtest.ByModel(map[string]llmtest.Script{
		"a":       llmtest.Always(llmtest.Error(503)),
		"b":       llmtest.Always(llmtest.Chunked("from ", "b")),
		"dead":    llmtest.Always(llmtest.Error(500)),
		"dead2":   llmtest.Always(llmtest.Error(500)),
		"limited": llmtest.Always(llmtest.Reply{Fault: &llmtest.Fault{Status: 429, Header: http.Header{"Retry-After-Ms": {"1"}}}}),
		"bad":     llmtest.Always(llmtest.Raw(400, `{"error":{"message":"too long","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`)),
		"cut":     llmtest.Always(llmtest.Streamed(llmtest.StreamCut, 2, "first ", "never")),
	}), cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "gateway.test.js")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LOOPCTL_GATEWAY_URL="+f.srv.URL+"/v1", "LOOPCTL_GATEWAY_KEY=sk-node")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
