package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// The real-client proof of GATEWAY §8.9: real Node clients (pinned in
// testdata/node/package-lock.json) and the coding-agent CLIs (pinned in
// testdata/agents/package-lock.json) pointed at the gateway, each model's
// primary failing on the client's own wire and its healthy backup on
// another wire, so that every answer the client reads was translated. Per
// client: a backup stream cut before content (an invisible failover to the
// next entry) and one cut after content (the client's own wire's error).
// Each case checks what the user sees (in the JS tests, or the CLI's
// output) and the gateway's side: the answers' x-loopctl-translated
// header and the translated requests the backups got.
func TestNodeCrossWire(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js (Debian: apt-get install -y nodejs npm), then run `npm ci` in gateway/testdata/node and gateway/testdata/agents")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "node"))
	for _, pkg := range []string{"openai", "@openai/agents", "@anthropic-ai/sdk", "@ai-sdk/anthropic", "@ai-sdk/openai", "ai", "zod"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("the %s npm package is not installed: run `npm ci` in %s (test.sh does it for every committed package-lock.json)", pkg, dir)
		}
	}
	f := newCrossWireFixture(t)
	start := time.Now()
	t.Cleanup(func() { t.Logf("TestNodeCrossWire: %.1fs", time.Since(start).Seconds()) })
	t.Run("node-clients", func(t *testing.T) {
		t.Run("anthropic-sdk", func(t *testing.T) {
			t.Parallel()
			f.runNode(t, node, dir, "anthropic.test.mjs")
			f.expectServed(t, "sdk", "up", "chat", "messages->chat")
			f.expectNoSignature(t, "weather-sdk", crossWireSignature)
			f.expectPairedResult(t, f.up, "weather-sdk", "18C and sunny")
		})
		t.Run("openai-chat", func(t *testing.T) {
			t.Parallel()
			f.runNode(t, node, dir, "openai.test.mjs")
			f.expectServed(t, "oai", "an", "messages", "chat->messages")
			f.expectPairedResult(t, f.an, "weather-oai", "18C and sunny")
		})
		t.Run("vercel-ai", func(t *testing.T) {
			t.Parallel()
			f.runNode(t, node, dir, "vercel.test.mjs")
			f.expectServed(t, "vercel", "an", "messages", "responses->messages", "chat->messages")
			f.expectServed(t, "vercel-an", "up", "chat", "messages->chat")
		})
		t.Run("openai-agents", func(t *testing.T) {
			t.Parallel()
			f.runNode(t, node, dir, "agents.test.mjs")
			f.expectServed(t, "agents", "an", "messages", "responses->messages")
			f.expectServed(t, "agents-chat", "chat", "chat", "responses->chat")
		})
	})
	t.Run("claude-code", func(t *testing.T) { f.runClaudeCode(t) })
	t.Run("codex", func(t *testing.T) { f.runCodex(t) })
}

// crossWireSignature is the thinking signature in the Anthropic SDK test's
// history: it must never reach an OpenAI backup.
const crossWireSignature = "crosswire-signature-never-forwarded"

// crossWireFixture is the gateway of TestNodeCrossWire in front of three
// scripted upstreams (up: openai, chat and responses; chat: openai, chat
// only; an: anthropic) and one that is gone (anthropic, connection
// refused), with every answer's headers recorded.
type crossWireFixture struct {
	up, chat, an *llmtest.Server
	srv          *httptest.Server
	rec          *crossWireLog
}

// crossWireModels are the gateway's models. Each client has a model X
// (primary down-X failing on the client's wire, backup weather-X on
// another wire), X-cut-early (the backup's stream breaks before content,
// then weather-X-cut-early serves) and X-cut-late (the backup's stream
// breaks after content, no other entry).
func crossWireModels() []Model {
	var ms []Model
	add := func(name, primary, backup string) {
		early, late := name+"-cut-early", name+"-cut-late"
		ms = append(ms,
			Model{Name: name, Primary: primary + "/down-" + name, Chain: []string{backup + "/weather-" + name}},
			Model{Name: early, Primary: primary + "/down-" + early, Chain: []string{backup + "/cutearly-" + name, backup + "/weather-" + early}},
			Model{Name: late, Primary: primary + "/down-" + late, Chain: []string{backup + "/cutlate-" + name}},
		)
	}
	add("sdk", "an", "up")           // @anthropic-ai/sdk, served by chat completions
	add("oai", "up", "an")           // openai chat completions, served by Messages
	add("vercel", "up", "an")        // @ai-sdk/openai (Responses and chat), served by Messages
	add("vercel-an", "an", "up")     // @ai-sdk/anthropic, served by chat completions
	add("agents", "up", "an")        // @openai/agents (Responses), served by Messages
	add("agents-chat", "up", "chat") // @openai/agents, served by a chat-only upstream
	add("cc", "an", "up")            // Claude Code, served by chat completions
	add("codex", "up", "an")         // Codex (Responses), served by Messages
	add("codex-chat", "up", "chat")  // Codex, served by a chat-only upstream
	// Claude Code with its primary unreachable (connection refused): its
	// first request, with a system turn inside messages, reaches the backup.
	ms = append(ms, Model{Name: "cc-gone", Primary: "gone/claude", Chain: []string{"up/weather-cc-gone"}})
	return ms
}

// crossWireScript answers every upstream model of crossWireModels by the
// prefix of its name.
func crossWireScript(r llmtest.Request) llmtest.Reply {
	kind, name, _ := strings.Cut(r.Model, "-")
	switch kind {
	case "down":
		// Anthropic's overload on a Messages primary, but 500 on the
		// X-cut-early models' primaries, whose chains have three entries:
		// after a primary's 529 (a rate limit to the model breaker) the
		// gateway retries a failing second entry until the attempt budget
		// is spent and never reaches the third, on a single wire too, which
		// is not what this test is about.
		if r.Endpoint == "messages" && !strings.HasSuffix(name, "-cut-early") {
			return llmtest.Error(529)
		}
		return llmtest.Error(500)
	case "cutearly": // after the stream's opening events, before any content
		at := map[string]int{"chat": 1, "messages": 1, "responses": 2}[r.Endpoint]
		return llmtest.Streamed(llmtest.StreamCut, at, "never ", "seen")
	case "cutlate": // after the first content delta
		at := map[string]int{"chat": 2, "messages": 4, "responses": 5}[r.Endpoint]
		return llmtest.Streamed(llmtest.StreamCut, at, "first ", "never")
	case "weather":
		if strings.HasPrefix(name, "cc") || strings.HasPrefix(name, "codex") {
			return agentCLIScript(r)
		}
		return weather(r)
	}
	return llmtest.Error(404)
}

// agentCLIScript is the coding agents' backup: it has the agent run
// `echo crosswire-ok` with its shell tool, then answers with what the tool
// said. A request without a shell tool (titles, summaries) gets text.
func agentCLIScript(r llmtest.Request) llmtest.Reply {
	if last := r.Last(); last.Role == "tool" {
		if strings.Contains(last.Content, "crosswire-ok") {
			return llmtest.Chunked("the tool said ", "crosswire-ok")
		}
		return llmtest.Text("the tool failed: " + last.Content)
	}
	for _, tool := range r.Tools {
		switch tool.Name {
		case "Bash": // Claude Code
			return llmtest.Calls(llmtest.Call("Bash", `{"command":"echo crosswire-ok","description":"Print a marker"}`))
		case "exec_command": // Codex (unified exec)
			return llmtest.Calls(llmtest.Call("exec_command", `{"cmd":"echo crosswire-ok"}`))
		case "shell": // Codex (classic shell tool)
			return llmtest.Calls(llmtest.Call("shell", `{"command":["bash","-lc","echo crosswire-ok"]}`))
		}
	}
	return llmtest.Text("hello from b")
}

func newCrossWireFixture(t *testing.T) *crossWireFixture {
	t.Helper()
	f := &crossWireFixture{
		up:   llmtest.NewOpenAI(crossWireScript),
		chat: llmtest.NewOpenAI(crossWireScript),
		an:   llmtest.NewAnthropic(crossWireScript),
		rec:  &crossWireLog{},
	}
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens there any more
	cfg := Config{
		ClientKeys: []ClientKey{{Name: "node", Key: "sk-node"}},
		Models:     crossWireModels(),
		Retry:      Retry{MaxRetries: -1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond},
		Upstreams: []Upstream{
			{Name: "up", BaseURL: f.up.BaseURL(), APIKey: "sk-up"},
			{Name: "chat", BaseURL: f.chat.BaseURL(), APIKey: "sk-chat", Wires: []string{"chat"}},
			{Name: "an", API: APIAnthropic, BaseURL: f.an.BaseURL(), APIKey: "sk-an"},
			{Name: "gone", API: APIAnthropic, BaseURL: gone.URL, APIKey: "sk-gone"},
		},
	}
	gw, err := New(cfg, Options{Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	fastRateLimits(gw)
	f.srv = httptest.NewServer(f.rec.wrap(gw))
	t.Cleanup(func() { f.srv.Close(); gw.Close(); f.up.Close(); f.chat.Close(); f.an.Close() })
	return f
}

// runNode runs one JS test file of testdata/node/crosswire with node --test.
func (f *crossWireFixture) runNode(t *testing.T, node, dir, file string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=tap", filepath.Join("crosswire", file))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"LOOPCTL_GATEWAY="+f.srv.URL, "LOOPCTL_GATEWAY_KEY=sk-node",
		// the Agents SDK's default client reads these; no tracing export
		"OPENAI_BASE_URL="+f.srv.URL+"/v1", "OPENAI_API_KEY=sk-node", "OPENAI_AGENTS_DISABLE_TRACING=1")
	out, err := cmd.CombinedOutput()
	t.Logf("%s(%.1fs)", out, time.Since(start).Seconds())
	if err != nil || !strings.Contains(string(out), "# fail 0") {
		t.Errorf("node --test %s: %v (its failing cases are above)", file, err)
	}
}

// expectServed checks the gateway's side of a client's three models: model
// is served by upstream's weather-model after a translation (one of wants
// in x-loopctl-translated), the backup got requests on its endpoint, the
// cut-early backup was tried and the next entry served, and the cut-late
// backup was tried.
func (f *crossWireFixture) expectServed(t *testing.T, model, upstream, endpoint string, wants ...string) {
	t.Helper()
	srv := map[string]*llmtest.Server{"up": f.up, "chat": f.chat, "an": f.an}[upstream]
	backups := []string{"weather-" + model, "weather-" + model + "-cut-early", "cutearly-" + model, "cutlate-" + model}
	for _, b := range backups {
		n := 0
		for _, r := range srv.Requests() {
			if r.Model != b {
				continue
			}
			n++
			if r.Endpoint != endpoint {
				t.Errorf("%s/%s got a request on %s, want %s (translated)", upstream, b, r.Endpoint, endpoint)
			}
		}
		if n == 0 {
			t.Errorf("%s/%s got no request: the chain did not reach the backup", upstream, b)
		}
	}
	for _, served := range []string{"weather-" + model, "weather-" + model + "-cut-early", "cutlate-" + model} {
		got := f.rec.translated(upstream + "/" + served)
		if len(got) == 0 {
			t.Errorf("no answer served by %s/%s was recorded", upstream, served)
		}
		for _, g := range got {
			if !crossWireHas(wants, g) {
				t.Errorf("an answer served by %s/%s: x-loopctl-translated %q, want one of %q", upstream, served, g, wants)
			}
		}
	}
}

// expectPairedResult checks that a request to the backup model carried the
// tool result, right after the assistant turn whose call it answers (ids
// paired after translation).
func (f *crossWireFixture) expectPairedResult(t *testing.T, srv *llmtest.Server, model, result string) {
	t.Helper()
	for _, r := range srv.Requests() {
		m := r.Messages
		if r.Model != model || len(m) < 2 || m[len(m)-1].Role != "tool" || m[len(m)-1].Content != result {
			continue
		}
		prev := m[len(m)-2]
		if prev.Role != "assistant" || len(prev.ToolCalls) != 1 || prev.ToolCalls[0].ID != m[len(m)-1].ToolCallID {
			t.Errorf("%s: the tool result %+v does not pair with the turn before it %+v", model, m[len(m)-1], prev)
		}
		return
	}
	t.Errorf("%s never got the tool result %q", model, result)
}

// expectNoSignature checks that no request the OpenAI backup model got
// carries a thinking signature (GATEWAY §8.2: never sent to non-Anthropic
// upstreams).
func (f *crossWireFixture) expectNoSignature(t *testing.T, model, sig string) {
	t.Helper()
	for _, r := range f.up.Requests() {
		if r.Model == model && strings.Contains(string(r.Body), sig) {
			t.Errorf("up/%s got the thinking signature: %s", model, r.Body)
		}
	}
}

// crossWireHas reports whether ss holds s.
func crossWireHas(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// crossWireLog records the x-loopctl-model, x-loopctl-translated and
// x-loopctl-dropped headers of every answer the gateway sends.
type crossWireLog struct {
	mu   sync.Mutex
	seen []crossWireAnswer
}

// crossWireAnswer is one recorded answer.
type crossWireAnswer struct {
	path, model, translated, dropped string
	status                           int
	// systemTurn: the client's request held a message with role
	// "system" (Claude Code sends them inside Messages' messages).
	systemTurn bool
}

// wrap returns h recording each answer's headers, and whether the
// request held a system turn inside a Messages request's messages.
func (l *crossWireLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		sys := r.URL.Path == "/v1/messages" && bytes.Contains(body, []byte(`"role":"system"`))
		h.ServeHTTP(&crossWireWriter{ResponseWriter: w, log: l, path: r.URL.Path, systemTurn: sys}, r)
	})
}

// translated returns the x-loopctl-translated values of the answers whose
// x-loopctl-model is served.
func (l *crossWireLog) translated(served string) []string {
	var out []string
	for _, a := range l.answers(served) {
		out = append(out, a.translated)
	}
	return out
}

// answers returns the recorded answers whose x-loopctl-model is served.
func (l *crossWireLog) answers(served string) []crossWireAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []crossWireAnswer
	for _, a := range l.seen {
		if a.model == served {
			out = append(out, a)
		}
	}
	return out
}

// dump lists the recorded answers whose x-loopctl-model contains one of
// parts.
func (l *crossWireLog) dump(parts ...string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, a := range l.seen {
		for _, p := range parts {
			if strings.Contains(a.model, p) {
				fmt.Fprintf(&b, "  %s %d x-loopctl-model=%s translated=%s dropped=%s\n", a.path, a.status, a.model, a.translated, a.dropped)
				break
			}
		}
	}
	return b.String()
}

// crossWireWriter is a ResponseWriter that records the answer's headers
// when they are written; Flush and Unwrap keep streaming working.
type crossWireWriter struct {
	http.ResponseWriter
	log        *crossWireLog
	path       string
	systemTurn bool
	written    bool
}

func (w *crossWireWriter) WriteHeader(status int) {
	if !w.written {
		w.written = true
		h := w.Header()
		w.log.mu.Lock()
		w.log.seen = append(w.log.seen, crossWireAnswer{path: w.path, status: status,
			model: h.Get("X-Loopctl-Model"), translated: h.Get("X-Loopctl-Translated"), dropped: h.Get("X-Loopctl-Dropped"), systemTurn: w.systemTurn})
		w.log.mu.Unlock()
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *crossWireWriter) Write(b []byte) (int, error) {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *crossWireWriter) Flush() {
	if !w.written {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *crossWireWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// agentsDir is testdata/agents (the coding-agent CLIs' npm packages), or
// a fatal error saying how to install them.
func agentsDir(t *testing.T, bin string) (dir, path string) {
	t.Helper()
	dir, _ = filepath.Abs(filepath.Join("testdata", "agents"))
	path = filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the %s CLI is not installed: run `npm ci` in %s (test.sh does it for every committed package-lock.json)", bin, dir)
	}
	return dir, path
}

// quietEnv is the environment of a coding-agent CLI run: the machine's
// PATH only, HOME a temp dir, and every switch that stops telemetry,
// update checks and other calls home.
func quietEnv(home string, more ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TMPDIR=" + home, "LANG=C.UTF-8", "TERM=dumb", "NO_COLOR=1", "CI=1",
		"DISABLE_TELEMETRY=1", "DISABLE_ERROR_REPORTING=1", "DISABLE_AUTOUPDATER=1", "DISABLE_BUG_COMMAND=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_NON_ESSENTIAL_MODEL_CALLS=1", "DISABLE_COST_WARNINGS=1",
		"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY=1", "CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1",
		"NO_UPDATE_NOTIFIER=1", "OTEL_SDK_DISABLED=true",
	}
	return append(env, more...)
}

// runCLI runs one CLI with a 90 s bound and returns its stdout and
// stderr, which it logs.
func runCLI(t *testing.T, dir string, env []string, name string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 5 * time.Second
	var errOut strings.Builder
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	t.Logf("%s %s (%.1fs)\nstdout: %s\nstderr: %s", filepath.Base(name), strings.Join(args, " "), time.Since(start).Seconds(), out, errOut.String())
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return string(out), errOut.String(), err
}

// claudeCodeResult is the end of `claude -p --output-format json`.
type claudeCodeResult struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	IsError bool   `json:"is_error"`
	Result  string `json:"result"`
	Turns   int    `json:"num_turns"`
}

// runClaudeCode: Claude Code (its Messages wire) with an overloaded
// Anthropic primary and an OpenAI chat completions backup: a Bash tool
// round trip, the same after a backup stream cut before content, and a
// stream cut after content, which Claude Code reports as an API error.
func (f *crossWireFixture) runClaudeCode(t *testing.T) {
	_, claude := agentsDir(t, "claude")
	home := t.TempDir()
	work := filepath.Join(home, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(model string, extra ...string) (claudeCodeResult, string, error) {
		env := quietEnv(home, "ANTHROPIC_BASE_URL="+f.srv.URL, "ANTHROPIC_API_KEY=sk-node",
			"CLAUDE_CONFIG_DIR="+filepath.Join(home, ".claude"),
			"ANTHROPIC_MODEL="+model, "ANTHROPIC_SMALL_FAST_MODEL="+model, "ANTHROPIC_DEFAULT_HAIKU_MODEL="+model,
			"ANTHROPIC_DEFAULT_SONNET_MODEL="+model, "ANTHROPIC_DEFAULT_OPUS_MODEL="+model, "CLAUDE_CODE_SUBAGENT_MODEL="+model,
			"DISABLE_UPDATES=1", "CLAUDE_CODE_MAX_RETRIES=0", "CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK=1")
		args := append([]string{"-p", "Run `echo crosswire-ok` with the Bash tool and tell me what it printed.",
			"--output-format", "json", "--model", model, "--allowedTools", "Bash", "--max-turns", "4"}, extra...)
		out, _, err := runCLI(t, work, env, claude, args...)
		var res claudeCodeResult
		if line := lastJSONLine(out); line != "" {
			_ = json.Unmarshal([]byte(line), &res)
		}
		return res, out, err
	}
	for _, model := range []string{"cc", "cc-cut-early", "cc-gone"} {
		res, out, err := run(model)
		if err != nil || res.IsError || !strings.Contains(res.Result, "crosswire-ok") {
			t.Errorf("claude -p --model %s: %v, result %+v, want the Bash tool's output crosswire-ok in the answer\n%s", model, err, res, out)
		}
	}
	// Claude Code reads the Messages error event and reports an API error.
	res, out, err := run("cc-cut-late")
	if err == nil || !res.IsError || !strings.Contains(res.Result, "stream") {
		t.Errorf("claude -p --model cc-cut-late: a stream broken after content must end in an error, got %+v\n%s", res, out)
	}
	f.expectServed(t, "cc", "up", "chat", "messages->chat")
	f.expectSystemTurnServed(t, "weather-cc-gone")
	t.Logf("Claude Code's answers:\n%s", f.rec.dump("/down-cc", "-cc"))
}

// expectSystemTurnServed checks GATEWAY §8.2's late system turn: Claude
// Code sent a request with a system message inside messages, the gateway
// answered it from the chat backup (messages->chat), and no request the
// backup got has a system message after its first.
func (f *crossWireFixture) expectSystemTurnServed(t *testing.T, model string) {
	t.Helper()
	served := false
	f.rec.mu.Lock()
	for _, a := range f.rec.seen {
		if a.model == "up/"+model && a.systemTurn && a.status == http.StatusOK && a.translated == "messages->chat" {
			served = true
		}
	}
	f.rec.mu.Unlock()
	if !served {
		t.Errorf("no request of Claude Code's with a system turn inside messages was served by up/%s", model)
	}
	for _, r := range f.up.Requests() {
		for i, m := range r.Messages {
			if r.Model == model && i > 0 && m.Role == "system" {
				t.Errorf("up/%s got a system message at %d (a late system turn must become a user turn): %.300s", model, i, m.Content)
			}
		}
	}
}

// lastJSONLine is the last line of out that starts with '{'.
func lastJSONLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.HasPrefix(l, "{") {
			return l
		}
	}
	return ""
}

// codexConfig is Codex's config.toml: a model provider at the gateway's
// /v1 (%q) on the Responses wire, no retries of its own, and nothing that
// calls home (update checks, plugin sync, analytics, feedback, OTel).
const codexConfig = `model_provider = "loopctl"
check_for_update_on_startup = false

[model_providers.loopctl]
name = "loopctl"
base_url = %q
env_key = "LOOPCTL_GATEWAY_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[features]
plugins = false # no curated plugin sync from GitHub
remote_plugin = false

[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"
`

// runCodex: Codex (its Responses wire, a model provider pointed at the
// gateway) with a failing OpenAI primary and a Claude backup, then with a
// chat-only backup: a shell tool round trip, the same after a backup
// stream cut before content, and a stream cut after content.
func (f *crossWireFixture) runCodex(t *testing.T) {
	_, codex := agentsDir(t, "codex")
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	work := filepath.Join(home, "work")
	for _, d := range []string{codexHome, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf(codexConfig, f.srv.URL+"/v1")
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(model string) (answer, stderr string, err error) {
		last := filepath.Join(home, model+".last")
		env := quietEnv(home, "CODEX_HOME="+codexHome, "LOOPCTL_GATEWAY_KEY=sk-node", "RUST_LOG=error")
		_, stderr, err = runCLI(t, work, env, codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
			"--model", model, "-o", last, "Run `echo crosswire-ok` in the shell and tell me what it printed.")
		b, _ := os.ReadFile(last)
		return string(b), stderr, err
	}
	for _, base := range []string{"codex", "codex-chat"} {
		for _, model := range []string{base, base + "-cut-early"} {
			answer, _, err := run(model)
			if err != nil || !strings.Contains(answer, "crosswire-ok") {
				t.Errorf("codex exec --model %s: %v, last message %q, want the shell's output crosswire-ok in it", model, err, answer)
			}
		}
		// Codex reads the Responses error event and reports the broken stream.
		answer, stderr, err := run(base + "-cut-late")
		if err == nil || !strings.Contains(stderr, "stream disconnected before completion") {
			t.Errorf("codex exec --model %s-cut-late: %v, last message %q: a stream broken after content must end in Codex's stream error", base, err, answer)
		}
	}
	f.expectServed(t, "codex", "an", "messages", "responses->messages")
	f.expectServed(t, "codex-chat", "chat", "chat", "responses->chat")
	// Codex offers web_search on every request: a Claude backup serves it
	// without, naming it (GATEWAY §8.3).
	for _, a := range f.rec.answers("an/weather-codex") {
		if !strings.Contains(a.dropped, "web_search") {
			t.Errorf("an answer served by an/weather-codex: x-loopctl-dropped %q, want web_search named", a.dropped)
		}
	}
	t.Logf("Codex's answers:\n%s", f.rec.dump("codex"))
}
