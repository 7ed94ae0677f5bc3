package cli

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/llmtest"
)

// Item 5: under a flood of connections dripping their headers or bodies,
// the open connections stay under the cap, every drip is cut, and a normal
// client is served during and after the flood.
func TestServeDripFlood(t *testing.T) {
	defer goleak.VerifyNone(t)
	const cap, drips = 40, 300
	var peak atomic.Int64
	s := serveSettings{demo: true, cfg: demoConfig(), logFormat: "text", grace: time.Second,
		readHeaderTimeout: time.Second, bodyGrace: time.Second, bodyRate: 1 << 10, maxConns: cap,
		onConn: func(n int) {
			for p := peak.Load(); int64(n) > p && !peak.CompareAndSwap(p, int64(n)); p = peak.Load() {
			}
		}}
	addr, stop, code := startServe(t, s, io.Discard, io.Discard)
	defer func() { stop(); <-code }()

	start := time.Now()
	var wg sync.WaitGroup
	var cut atomic.Int64
	var slowest atomic.Int64
	for i := range drips {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				return
			}
			defer c.Close()
			head := "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			if i%2 == 1 { // complete headers, then a dripped body
				head += "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
			}
			_, _ = io.WriteString(c, head)
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			go func() { // one byte every 200 ms until the server cuts it
				for range 100 {
					time.Sleep(200 * time.Millisecond)
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}()
			_, _ = io.Copy(io.Discard, c) // returns when the server closes
			if time.Since(start) < 20*time.Second {
				cut.Add(1)
			}
			if d := int64(time.Since(start)); d > slowest.Load() {
				slowest.Store(d)
			}
		}()
	}
	// A normal client during the flood.
	time.Sleep(300 * time.Millisecond)
	t0 := time.Now()
	post := func() (int, error) {
		c := &http.Client{Timeout: 15 * time.Second}
		res, err := c.Post("http://"+addr+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"demo","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			return 0, err
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		c.CloseIdleConnections()
		return res.StatusCode, nil
	}
	if st, err := post(); err != nil || st != 200 {
		t.Errorf("normal client during the flood: %d %v", st, err)
	}
	during := time.Since(t0)
	wg.Wait()
	t1 := time.Now()
	if st, err := post(); err != nil || st != 200 || time.Since(t1) > time.Second {
		t.Errorf("normal client after the flood: %d %v after %v", st, err, time.Since(t1))
	}
	if cut.Load() != drips {
		t.Errorf("%d of %d drips cut", cut.Load(), drips)
	}
	if p := peak.Load(); p > cap {
		t.Errorf("%d connections open at once, cap %d", p, cap)
	}
	if d := time.Duration(slowest.Load()); d > 15*time.Second {
		t.Errorf("the last drip was cut after %v", d)
	}
	t.Logf("%d drips over a cap of %d: all cut within %v (peak %d open); a normal request took %v during the flood",
		drips, cap, time.Duration(slowest.Load()).Round(time.Millisecond), peak.Load(), during.Round(time.Millisecond))
}

func TestConnLimitBelowTheFdLimit(t *testing.T) {
	for _, n := range []uint64{1024, 20000, 1 << 20} {
		if c := connLimit(n); c <= 0 || uint64(2*c) >= n {
			t.Errorf("connLimit(%d) = %d", n, c)
		}
	}
}

// Item 10: serve --redis starts while the store is down, is ready and says
// it runs locally, shows loopctl_store_up 0, and joins the store when it
// answers (logged both ways). store.required restores the strict start.
func TestServeStartsWithoutTheStore(t *testing.T) {
	port := freePort(t)
	url := fmt.Sprintf("redis://127.0.0.1:%d/0", port)
	up := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("ok")))
	defer up.Close()
	cfg := gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "up", BaseURL: up.BaseURL()}},
		Models:    []gateway.Model{{Name: "m", Primary: "up/a"}},
		Store:     gateway.Store{Redis: url, Prefix: fmt.Sprintf("t%d", time.Now().UnixNano())},
	}
	strict := cfg
	strict.Store.Required = true
	if c := serve(t.Context(), serveSettings{cfg: strict, logFormat: "text", grace: time.Second}, io.Discard, io.Discard); c != ExitFailure {
		t.Errorf("store.required with the store down: exit %d", c)
	}
	var logs syncBuffer
	addr, stop, code := startServe(t, serveSettings{cfg: cfg, logFormat: "text", grace: time.Second}, io.Discard, &logs)
	stopped := false
	defer func() {
		if !stopped {
			stop()
			<-code
		}
	}()
	get := func(path string) (int, string) {
		res, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("not %s within 10s; logs:\n%s", what, logs.String())
			}
		}
	}
	waitFor("local", func() bool {
		st, body := get("/readyz")
		_, m := get("/metrics")
		return st == 200 && strings.Contains(body, "store: local") && strings.Contains(m, "loopctl_store_up{store=\""+cfg.Store.Prefix+"\"} 0")
	})
	res, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("served locally: %v %v", err, res)
	}
	res.Body.Close()
	startRedisOn(t, port)
	waitFor("shared", func() bool {
		st, body := get("/readyz")
		_, m := get("/metrics")
		return st == 200 && strings.Contains(body, "store: shared") && strings.Contains(m, "loopctl_store_up{store=\""+cfg.Store.Prefix+"\"} 1")
	})
	if l := logs.String(); !strings.Contains(l, "store down at start") || !strings.Contains(l, "connect: connection refused") || !strings.Contains(l, "store up") {
		t.Errorf("logs:\n%s", l)
	}
	http.DefaultClient.CloseIdleConnections()
	stop()
	<-code
	stopped = true
	// The Redis client's delayed retries end on their own within a second
	// or so: wait, so that later tests' leak checks see none.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if !strings.Contains(allStacks(), "rueidis") {
			break
		}
	}
}

func allStacks() string {
	b := make([]byte, 1<<20)
	return string(b[:runtime.Stack(b, true)])
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startRedisOn starts a redis-server on port, stopped when the test ends.
func startRedisOn(t *testing.T, port int) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not found: install it (Debian: apt-get install -y redis-server); test.sh does")
	}
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

// Items 9 and 10: --check runs every check serve runs; a bad --listen port
// is a usage error (2).
func TestServeCheckRunsEveryCheck(t *testing.T) {
	t.Setenv("LOOPCTL_TEST_UNSET_KEY", "")
	for _, tc := range []struct {
		yaml, want string
	}{
		{"upstreams: [{name: u, base_url: 'http://127.0.0.1:1/v1', api_key_env: LOOPCTL_TEST_UNSET_KEY}]\nmodels: [{name: m, primary: u/x}]\n",
			"upstreams[0].api_key_env: environment variable LOOPCTL_TEST_UNSET_KEY is not set"},
		{"upstreams: [{name: u, base_url: 'http://127.0.0.1:1/v1'}]\nmodels: [{name: m, primary: u/x}]\nretry: {base_delay: 20s, max_delay: 10s}\n",
			"retry.base_delay: 20s must not exceed retry.max_delay (10s)"},
		{"upstreams: [{name: u, base_url: 'http://127.0.0.1:1/v1?key=secret'}]\nmodels: [{name: m, primary: u/x}]\n",
			"upstreams[0].base_url: \"http://127.0.0.1:1/v1?xxxxx\" must not have a query string"},
		{"upstreams: [{name: u, base_url: 'http://127.0.0.1:1/v1'}]\nmodels: [{name: m, primary: u/x, breaker: {trip_threshold: 0}}]\nlimits: {max_body: 0}\n",
			"models[0].breaker.trip_threshold: must be at least 1"},
	} {
		code, _, errs := run(t, "serve", "--check", "--config", writeConfig(t, tc.yaml))
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("code %d, stderr %q; want 2 and %q", code, errs, tc.want)
		}
	}
	code, _, errs := run(t, "serve", "--listen", "127.0.0.1:99999")
	if code != ExitUsage || !strings.Contains(errs, "listen") {
		t.Errorf("--listen 127.0.0.1:99999: code %d, %q", code, errs)
	}
}

// Item 15: serve logs every breaker transition and the model a request
// refused before routing named; the shutdown message is clean.
func TestServeLogsTransitionsAndRefusals(t *testing.T) {
	defer goleak.VerifyNone(t)
	up := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Error(500)), "b": llmtest.Always(llmtest.Text("from b")),
	}))
	defer up.Close()
	cfg := gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "up", BaseURL: up.BaseURL()}},
		Models:    []gateway.Model{{Name: "m", Primary: "up/a", Chain: []string{"up/b"}}},
		Retry:     gateway.Retry{MaxRetries: -1},
	}
	var logs, out syncBuffer
	addr, stop, code := startServe(t, serveSettings{cfg: cfg, logFormat: "text", grace: time.Second}, &out, &logs)
	for _, body := range []string{`{"model":"m","messages":[{"role":"user","content":"hi"}]}`, `{"model":"nope","messages":[]}`} {
		res, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	http.DefaultClient.CloseIdleConnections()
	stop()
	<-code
	l := logs.String()
	for _, want := range []string{
		`msg=breaker model=m from=primary to=fallback routed=up/b reason="up/a failed trip_threshold times in a row"`,
		`msg=request api=chat model=nope`,
	} {
		if !strings.Contains(l, want) {
			t.Errorf("log lacks %s:\n%s", want, l)
		}
	}
	if o := out.String(); strings.Contains(o, "context deadline exceeded") || !strings.Contains(o, "loopctl serve: stopped") {
		t.Errorf("stdout:\n%s", o)
	}
}

// Item 10: the real binary stops at once on a second SIGTERM while a stream
// keeps the drain waiting.
func TestServeSecondSignalStopsAtOnce(t *testing.T) {
	resume := make(chan struct{})
	defer close(resume)
	rep := llmtest.Chunked("first ", "last")
	rep.StreamFault = &llmtest.StreamFault{At: 2, Kind: llmtest.StreamPause, Resume: resume}
	up := llmtest.NewOpenAI(llmtest.Always(rep))
	defer up.Close()
	path := writeConfig(t, fmt.Sprintf("listen: 127.0.0.1:0\nupstreams: [{name: up, base_url: %q}]\nmodels: [{name: m, primary: up/x}]\n", up.BaseURL()))
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fleetReplicaEnv+"="+strings.Join([]string{"serve", "--config", path, "--grace", "30s"}, "\n"))
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var addr string
	for l := range lines {
		if rest, ok := strings.CutPrefix(l, "loopctl serve: listening on http://"); ok {
			addr = strings.Fields(rest)[0]
			break
		}
	}
	res, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = res.Body.Read(make([]byte, 1024))
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for l := range lines {
		if strings.Contains(l, "draining") {
			break
		}
	}
	t0 := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if d := time.Since(t0); d > 2*time.Second || cmd.ProcessState.ExitCode() != ExitFailure {
			t.Errorf("exit %v (%d) after %v", err, cmd.ProcessState.ExitCode(), d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("still running 5s after the second SIGTERM")
	}
}
