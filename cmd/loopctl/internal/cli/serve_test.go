package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/llmtest"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "loopctl.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServeCheck(t *testing.T) {
	good := writeConfig(t, `
upstreams:
  - name: openai
    base_url: https://api.openai.com/v1
    api_key_env: OPENAI_API_KEY
models:
  - name: smart
    primary: openai/gpt-5
    chain: [openai/gpt-5-mini]
limits:
  max_body: 1MiB
`)
	t.Setenv("OPENAI_API_KEY", "sk-test") // --check reads the variables *_env name, as serve does
	code, out, errs := run(t, "serve", "--check", "--config", good)
	if code != ExitOK || !strings.Contains(out, "OK (1 models: smart; 1 upstreams)") {
		t.Fatalf("code %d, out %q, err %q", code, out, errs)
	}

	bad := writeConfig(t, `
upstreams:
  - name: anthropic
    base_url: ftp://x
models:
  - name: a
    primary: anthropic/claude
  - name: b
    primary: anthropc/claude
    chain: [anthropc/haiku]
    breaker: {trip_threshold: -1, recovery_timeout: soon}
timeouts: {first_bite: 1s}
limits: {max_body: 10MB}
`)
	code, _, errs = run(t, "serve", "--check", "--config", bad)
	if code != ExitUsage {
		t.Fatalf("code %d", code)
	}
	for _, want := range []string{
		`upstreams[0].base_url: "ftp://x" is not an http:// or https:// URL`,
		`models[1].primary: unknown upstream "anthropc"`,
		`models[1].chain[0]: unknown upstream "anthropc"`,
		`models[1].breaker.recovery_timeout: "soon" is not a duration`,
		`models[1].breaker.trip_threshold: must be at least 1`,
		`timeouts.first_bite: unknown key`,
		`limits.max_body: "10MB" is not a size`,
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}

func TestServeRefusesUnsafeStarts(t *testing.T) {
	cfg := writeConfig(t, `
upstreams: [{name: up, base_url: "http://127.0.0.1:1/v1"}]
models: [{name: m, primary: up/x}]
`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", cfg, "--listen", "0.0.0.0:4000"}, "refusing to listen on 0.0.0.0:4000 without client_keys"},
		{[]string{"--listen", ":4000"}, "refusing to listen on :4000 without client_keys"},
		{[]string{"--redis", "http://x"}, `store.redis: "http://x" is not a redis:// or rediss:// URL`},
		{[]string{"--log-format", "xml"}, "--log-format"},
		{[]string{"--check"}, "--check needs --config"},
	} {
		code, _, errs := run(t, append([]string{"serve"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: code %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

// startServe runs serve in the background and returns its address, the
// function that stops it (like SIGTERM) and the channel its exit code
// arrives on.
func startServe(t *testing.T, s serveSettings, stdout, logs io.Writer) (string, context.CancelFunc, chan int) {
	t.Helper()
	ready := make(chan string, 1)
	s.ready = func(addr string) { ready <- addr }
	s.logOut = logs
	if s.cfg.Listen == "" {
		s.cfg.Listen = "127.0.0.1:0"
	}
	ctx, stop := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() { code <- serve(ctx, s, stdout, io.Discard) }()
	select {
	case addr := <-ready:
		return addr, stop, code
	case c := <-code:
		stop()
		t.Fatalf("serve exited with %d", c)
	}
	return "", stop, code
}

func TestServeDemo(t *testing.T) {
	defer goleak.VerifyNone(t)
	var out, logs syncBuffer
	addr, stop, code := startServe(t, serveSettings{demo: true, cfg: demoConfig(), logFormat: "json", grace: time.Second}, &out, &logs)
	res, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"demo","messages":[{"role":"user","content":"ping"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	// The demo model on the other wires too (translated: its upstream
	// speaks chat completions).
	for path, req := range map[string]string{
		"/v1/messages":  `{"model":"demo","max_tokens":64,"messages":[{"role":"user","content":"ping"}]}`,
		"/v1/responses": `{"model":"demo","input":"ping"}`,
	} {
		r, err := http.Post("http://"+addr+path, "application/json", strings.NewReader(req))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != 200 || !strings.Contains(string(b), `You said: \"ping\"`) {
			t.Errorf("%s: %d %s", path, r.StatusCode, b)
		}
	}
	stop()
	if c := <-code; c != ExitOK {
		t.Fatalf("exit %d", c)
	}
	if res.StatusCode != 200 || !strings.Contains(string(body), `You said: \"ping\"`) {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	lines := strings.Split(out.String(), "\n")
	for i, want := range []string{"listening on http://" + addr + " (base URLs: OpenAI chat completions and Responses http://" + addr + "/v1, Anthropic Messages http://" + addr + ")", "models: demo", "stop: Ctrl-C or SIGTERM"} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d %q lacks %q", i+1, lines[i], want)
		}
	}
	if l := logs.String(); !strings.Contains(l, `"msg":"request","api":"chat","model":"demo","served":"embedded/primary","attempts":1`) {
		t.Errorf("request log %s", l)
	}
	http.DefaultClient.CloseIdleConnections()
}

// SIGTERM (here: the context ending) lets a stream in flight finish, then
// serve exits 0.
func TestServeDrainsStreams(t *testing.T) {
	defer goleak.VerifyNone(t)
	resume := make(chan struct{})
	rep := llmtest.Chunked("first ", "last")
	rep.StreamFault = &llmtest.StreamFault{At: 2, Kind: llmtest.StreamPause, Resume: resume}
	up := llmtest.NewOpenAI(llmtest.Always(rep))
	defer up.Close()
	cfg := gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "up", BaseURL: up.BaseURL()}},
		Models:    []gateway.Model{{Name: "m", Primary: "up/x"}},
	}
	var out syncBuffer
	addr, stop, code := startServe(t, serveSettings{cfg: cfg, logFormat: "text", grace: 10 * time.Second}, &out, io.Discard)
	res, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 4096)
	n, _ := res.Body.Read(buf) // the stream has started
	stop()
	for !strings.Contains(out.String(), "draining") {
		time.Sleep(time.Millisecond)
	}
	select {
	case c := <-code:
		t.Fatalf("exited (%d) with a stream in flight", c)
	case <-time.After(50 * time.Millisecond):
	}
	close(resume)
	rest, err := io.ReadAll(res.Body)
	if err != nil || !strings.Contains(string(buf[:n])+string(rest), "data: [DONE]") {
		t.Fatalf("stream %s%s, err %v", buf[:n], rest, err)
	}
	if c := <-code; c != ExitOK {
		t.Fatalf("exit %d", c)
	}
	// New connections are refused once draining.
	if _, err := net.Dial("tcp", addr); err == nil {
		t.Error("still accepting connections after the drain")
	}
}

// A client that sends its headers too slowly is cut off by
// ReadHeaderTimeout.
func TestServeSlowLoris(t *testing.T) {
	defer goleak.VerifyNone(t)
	addr, stop, code := startServe(t, serveSettings{demo: true, cfg: demoConfig(), logFormat: "text", grace: time.Second,
		readHeaderTimeout: 100 * time.Millisecond}, io.Discard, io.Discard)
	defer func() { stop(); <-code }()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	b, err := io.ReadAll(c) // the server closes the connection
	if err != nil {
		t.Fatalf("read: %v (the server did not close the connection)", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("cut off after %v", d)
	}
	_ = b
}
