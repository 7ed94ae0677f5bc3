package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// reloadYAML is the config of TestServeReloadBinary: a trips at its first
// failure (its primary always fails) and stays open an hour; b and s serve
// (s streams until the test lets it end); keys come from files.
const reloadYAML = `
client_keys: [{name: team, key_file: DIR/client}]
admin_keys: [{name: oncall, key_file: DIR/admin}]
upstreams: [{name: up, base_url: UP}]
models:
  - {name: a, primary: up/fail, chain: [up/ok], breaker: {trip_threshold: 1, recovery_timeout: 1h}}
  - {name: b, primary: up/ok, chain: [up/ok2], breaker: {recovery_timeout: 1m}}
  - {name: s, primary: up/slow}
`

// openUntil returns model's state and open_until as GET /admin/breakers/{model}
// shows them (GATEWAY.md §9.1).
func openUntil(t *testing.T, p *proc, model string) (string, string) {
	t.Helper()
	code, body := p.request("GET", "/admin/breakers/"+model, "sk-admin", "")
	var v struct {
		State     string `json:"state"`
		OpenUntil string `json:"open_until"`
	}
	if err := json.Unmarshal([]byte(body), &v); code != 200 || err != nil {
		t.Fatalf("/admin/breakers/%s: %d %v %s", model, code, err, body)
	}
	return v.State, v.OpenUntil
}

// TestServeReloadBinary: SIGHUP on the real binary with model a open and
// only b's recovery_timeout changed: a is still open until the same
// instant (its open_until on /admin/breakers), a stream started before the reload
// completes, and the client key rotated in its file works at once while the
// old one is refused; a config with an unknown key is refused naming its
// key path (in the log, and in POST /admin/reload's answer) and the config
// in force keeps serving.
func TestServeReloadBinary(t *testing.T) {
	resume := make(chan struct{})
	defer func() {
		select {
		case <-resume:
		default:
			close(resume)
		}
	}()
	slow := llmtest.Chunked("first ", "last")
	slow.StreamFault = &llmtest.StreamFault{At: 2, Kind: llmtest.StreamPause, Resume: resume}
	up := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"fail": llmtest.Always(llmtest.Error(503)), "ok": llmtest.Always(llmtest.Text("ok")),
		"ok2": llmtest.Always(llmtest.Text("ok2")), "slow": llmtest.Always(slow),
	}))
	defer up.Close()
	dir := t.TempDir()
	write := func(name, text string) {
		text = strings.NewReplacer("DIR", dir, "UP", up.BaseURL()).Replace(text)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("client", "sk-old\n")
	write("admin", "sk-admin\n")
	write("loopctl.yaml", reloadYAML)
	p := startLoopctl(t, nil, "serve", "--config", filepath.Join(dir, "loopctl.yaml"), "--listen", "127.0.0.1:0")
	if code, _ := p.request("POST", "/v1/chat/completions", "sk-old", chatReq("a")); code != 200 {
		t.Fatalf("a: %d", code)
	}
	state, until := openUntil(t, p, "a")
	if state != "fallback" || until == "" {
		t.Fatalf("a is %s until %q, want open", state, until)
	}
	body, seen := p.stream("s", "sk-old")
	defer body.Close()

	write("client", "sk-new\n")
	write("loopctl.yaml", strings.Replace(reloadYAML, "recovery_timeout: 1m", "recovery_timeout: 5m", 1))
	p.signal(syscall.SIGHUP)
	p.waitLog("config reloaded")
	if s2, until2 := openUntil(t, p, "a"); s2 != "fallback" || until2 != until {
		t.Fatalf("after the reload a is %s until %q, was open until %q", s2, until2, until)
	}
	if c1, _ := p.request("POST", "/v1/chat/completions", "sk-old", chatReq("b")); c1 != 401 {
		t.Fatalf("the old client key: %d, want 401", c1)
	}
	if c2, _ := p.request("POST", "/v1/chat/completions", "sk-new", chatReq("b")); c2 != 200 {
		t.Fatalf("the rotated client key: %d, want 200", c2)
	}
	close(resume)
	rest, err := io.ReadAll(body)
	if err != nil || !strings.Contains(seen+string(rest), "data: [DONE]") {
		t.Fatalf("the stream started before the reload: %v %s%s", err, seen, rest)
	}
	_, metrics := p.request("GET", "/metrics", "sk-admin", "")
	if !strings.Contains(metrics, "loopctl_config_last_reload_successful 1") || !strings.Contains(metrics, "loopctl_config_last_reload_success_timestamp_seconds ") {
		t.Fatalf("metrics lack the reload gauges")
	}

	write("loopctl.yaml", strings.Replace(reloadYAML, "{name: b, primary: up/ok,", "{name: b, primary: up/ok, colour: red,", 1))
	p.signal(syscall.SIGHUP)
	p.waitLog("config reload failed")
	p.waitLog("models[1].colour: unknown key")
	code, answer := p.request("POST", "/admin/reload", "sk-admin", "")
	if code != 400 || !strings.Contains(answer, `"path":"models[1].colour"`) {
		t.Fatalf("POST /admin/reload of a bad config: %d %s", code, answer)
	}
	if c, _ := p.request("POST", "/v1/chat/completions", "sk-new", chatReq("b")); c != 200 {
		t.Fatalf("after a refused reload: %d", c)
	}
	if _, m := p.request("GET", "/metrics", "sk-admin", ""); !strings.Contains(m, "loopctl_config_last_reload_successful 0") {
		t.Fatal("loopctl_config_last_reload_successful is not 0 after a refused reload")
	}
	p.signal(syscall.SIGTERM)
	if c := p.wait(10 * time.Second); c != ExitOK {
		t.Fatalf("exit %d", c)
	}
}

func chatReq(model string) string {
	return `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}]}`
}
