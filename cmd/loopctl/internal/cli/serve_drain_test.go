package cli

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// drainYAML: s streams "first " and waits for the test before its end; b
// answers at once.
const drainYAML = `
upstreams: [{name: up, base_url: UP}]
models:
  - {name: s, primary: up/slow}
  - {name: b, primary: up/ok}
`

// startDrainable starts the binary on drainYAML with flags; resume lets s's
// streams end.
func startDrainable(t *testing.T, resume <-chan struct{}, flags ...string) *proc {
	t.Helper()
	slow := llmtest.Chunked("first ", "last")
	slow.StreamFault = &llmtest.StreamFault{At: 2, Kind: llmtest.StreamPause, Resume: resume}
	up := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{"slow": llmtest.Always(slow), "ok": llmtest.Always(llmtest.Text("ok"))}))
	t.Cleanup(up.Close)
	cfg := filepath.Join(t.TempDir(), "loopctl.yaml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(drainYAML, "UP", up.BaseURL(), 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return startLoopctl(t, nil, append([]string{"serve", "--config", cfg, "--listen", "127.0.0.1:0"}, flags...)...)
}

// readyz returns /readyz's status on a new connection (0: none).
func readyz(addr string) int {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	res, err := c.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// TestServeDrainBinary: SIGTERM with --drain-delay 2s: /readyz answers 503
// within 100 ms, a new request 1 s later is served, three streams open
// before the signal end with their end marker, and the exit is 0.
func TestServeDrainBinary(t *testing.T) {
	resume := make(chan struct{})
	p := startDrainable(t, resume, "--drain-delay", "2s", "--grace", "10s")
	type open struct {
		body io.ReadCloser
		seen string
	}
	var streams []open
	for range 3 {
		b, seen := p.stream("s", "")
		defer b.Close()
		streams = append(streams, open{b, seen})
	}
	if code := readyz(p.addr); code != 200 {
		t.Fatalf("/readyz before the signal: %d", code)
	}
	t0 := time.Now()
	p.signal(syscall.SIGTERM)
	for readyz(p.addr) != http.StatusServiceUnavailable {
		if time.Since(t0) > time.Second {
			t.Fatal("/readyz still not 503 a second after SIGTERM")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if took := time.Since(t0); took > 100*time.Millisecond {
		t.Errorf("/readyz answered 503 %v after SIGTERM, want within 100ms", took)
	}
	time.Sleep(time.Until(t0.Add(time.Second)))
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := c.Post("http://"+p.addr+"/v1/chat/completions", "application/json", strings.NewReader(chatReq("b")))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("a new request 1s into the drain delay: %v %v", err, res)
	}
	res.Body.Close()
	time.Sleep(time.Until(t0.Add(2500 * time.Millisecond))) // the grace has started
	close(resume)
	for i, s := range streams {
		rest, err := io.ReadAll(s.body)
		if err != nil || !strings.Contains(s.seen+string(rest), "data: [DONE]") {
			t.Errorf("stream %d: %v %s%s", i, err, s.seen, rest)
		}
	}
	if code := p.wait(5 * time.Second); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
}

// TestServeGraceEndsStreamsBinary: a stream longer than --grace ends with
// its wire's error event (not a silent cut) and the exit is 0.
func TestServeGraceEndsStreamsBinary(t *testing.T) {
	resume := make(chan struct{})
	defer close(resume)
	p := startDrainable(t, resume, "--grace", "1s")
	body, seen := p.stream("s", "")
	defer body.Close()
	t0 := time.Now()
	p.signal(syscall.SIGTERM)
	rest, _ := io.ReadAll(body)
	took := time.Since(t0)
	all := seen + string(rest)
	if !strings.Contains(all, `"code":"stream_interrupted"`) || !strings.Contains(all, "shutting down") || strings.Contains(all, "[DONE]") {
		t.Fatalf("the stream cut at the grace's end:\n%s", all)
	}
	if took < time.Second || took > 1500*time.Millisecond {
		t.Errorf("the stream ended %v after SIGTERM, want at the 1s grace", took)
	}
	if code := p.wait(5 * time.Second); code != ExitOK {
		t.Fatalf("exit %d", code)
	}
}
