package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// everythingDir holds the pinned @modelcontextprotocol/server-everything
// (package.json and package-lock.json; test.sh runs npm ci there).
const everythingDir = "../../../../mcptool/testdata/everything"

// everything returns the command line that runs the official MCP reference
// server over stdio, failing the test with how to install what is missing.
func everything(t *testing.T) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: install Node.js 18 or later (Debian: apt-get install nodejs npm), then run `npm ci` in %s", everythingDir)
	}
	entry, err := filepath.Abs(filepath.Join(everythingDir, "node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("the MCP reference server is not installed: run `(cd %s && npm ci)` (test.sh does it): %v", everythingDir, err)
	}
	return []string{node, entry, "stdio"}
}

// proxyRun is `loopctl mcp-proxy ARGS` running in this process over stdio
// pipes, with a go-sdk client connected to it.
type proxyRun struct {
	p        *mcptool.Proxy
	cs       *mcp.ClientSession
	stderr   *syncBuffer
	progress chan *mcp.ProgressNotificationParams // relayed to the client
	logs     chan *mcp.LoggingMessageParams       // relayed to the client
	updated  chan string                          // URIs of relayed notifications/resources/updated
}

// startProxy runs mcp-proxy with args and connects a client; at the end of
// the test the client closes stdin and the command must exit 0.
func startProxy(t *testing.T, args ...string) *proxyRun {
	t.Helper()
	r := &proxyRun{stderr: &syncBuffer{}, progress: make(chan *mcp.ProgressNotificationParams, 100),
		logs: make(chan *mcp.LoggingMessageParams, 100), updated: make(chan string, 100)}
	started := make(chan *mcptool.Proxy, 1)
	proxyHooks.started = func(p *mcptool.Proxy) { started <- p }
	t.Cleanup(func() { proxyHooks.started = nil })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	code := make(chan int, 1)
	go func() {
		c := serveMCPProxy(context.Background(), args, inR, outW, r.stderr)
		outW.Close()
		code <- c
	}()
	select {
	case r.p = <-started:
	case c := <-code:
		t.Fatalf("mcp-proxy exited %d before serving: %s", c, r.stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("mcp-proxy did not start: %s", r.stderr.String())
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { r.progress <- req.Params },
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			select {
			case r.logs <- req.Params:
			default:
			}
		},
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case r.updated <- req.Params.URI:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("initialize through mcp-proxy: %v\n%s", err, r.stderr.String())
	}
	r.cs = cs
	t.Cleanup(func() {
		cs.Close()
		inW.Close()
		select {
		case c := <-code:
			if c != ExitOK {
				t.Errorf("mcp-proxy exited %d: %s", c, r.stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Errorf("mcp-proxy did not exit after stdin closed")
		}
	})
	return r
}

// call calls a tool; a JSON-RPC error fails the test.
func (r *proxyRun) call(t *testing.T, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := r.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: a protocol error reached the client: %v", name, err)
	}
	return res
}

// listTools returns a session's tools by name, as JSON.
func listTools(t *testing.T, cs *mcp.ClientSession) map[string]string {
	t.Helper()
	out := map[string]string{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(tool)
		out[tool.Name] = string(b)
	}
	return out
}

// childPIDs returns the processes whose parent is this test process.
func childPIDs(t *testing.T) []int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(os.Getpid()) && fields[0] != "Z" {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestMCPProxyEverythingListsAndForwards(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the proxy has exited
	argv := everything(t)

	// The reference server as a client sees it directly, with the client
	// capabilities the proxy declares (sampling, elicitation and roots, which
	// it relays): the server lists some tools only to clients that have them.
	direct := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}},
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return nil, errors.New("not used")
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not used")
		},
	})
	dcs, err := direct.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...), TerminateDuration: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dcs.Close()

	r := startProxy(t, append([]string{"--"}, argv...)...)
	var want, got map[string]string
	waitFor(t, 5*time.Second, "the proxy to list the server's tools unchanged", func() bool {
		want, got = listTools(t, dcs), listTools(t, r.cs)
		return len(want) > 0 && fmt.Sprint(want) == fmt.Sprint(got)
	})
	if !slices.Contains(slices.Collect(mapsKeys(got)), "echo") {
		t.Fatalf("no echo tool: %v", got)
	}

	res := r.call(t, "echo", map[string]any{"message": "hello"})
	if res.IsError || mcptool.ResultText(res) != "Echo: hello" {
		t.Fatalf("echo: %+v", res)
	}
	res = r.call(t, "get-sum", map[string]any{"a": 2, "b": 3})
	if !strings.Contains(mcptool.ResultText(res), "5") {
		t.Fatalf("get-sum: %q", mcptool.ResultText(res))
	}
	res = r.call(t, "get-structured-content", map[string]any{"location": "Chicago"})
	if m, ok := res.StructuredContent.(map[string]any); !ok || m["temperature"] == nil {
		t.Fatalf("structured content not forwarded: %+v", res.StructuredContent)
	}
	// Progress of a long-running tool reaches the client under its own token.
	params := &mcp.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 1, "steps": 4}}
	params.SetProgressToken("mine")
	if _, err := r.cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "a relayed progress notification", func() bool { return len(r.progress) > 0 })
	if n := <-r.progress; n.ProgressToken != "mine" || n.Total != 4 || n.Progress != 1 {
		t.Fatalf("relayed progress: %+v", n)
	}

	// Bad arguments: the server's own isError answer, passed through, not counted.
	res = r.call(t, "get-sum", map[string]any{"a": "two"})
	if !res.IsError {
		t.Fatalf("bad arguments: %+v", res)
	}
	if st := r.p.Registry().Stats("server-everything/get-sum"); st.Failures != 0 || st.Calls != 2 {
		t.Fatalf("get-sum stats: %+v", st)
	}
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestMCPProxyEverythingDeadlinesAndRestarts(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) }) // runs last: after the proxy has exited
	argv := everything(t)
	cfg := filepath.Join(t.TempDir(), "proxy.json")
	os.WriteFile(cfg, []byte(`{
		"tools": {"everything/trigger-long-running-operation": {"timeout": "1s"}},
		"breaker": {"failureThreshold": 2, "cooldown": "1s", "probeTimeout": "5s"},
		"restart": {"base": "200ms", "max": "1s"}
	}`), 0o644)
	r := startProxy(t, append([]string{"--config", cfg, "--name", "everything", "--"}, argv...)...)
	reg := r.p.Registry()

	// A slow tool is cut by its deadline, the cut reaches the server as a
	// cancellation, and it counts as a failure.
	began := time.Now()
	res := r.call(t, "trigger-long-running-operation", map[string]any{"duration": 10, "steps": 10})
	if d := time.Since(began); d > 5*time.Second {
		t.Fatalf("the slow tool ran %v despite its 1s timeout", d)
	}
	// the deadline it had, not the time measured ("1.1s" for --timeout 1s was a bug)
	if !res.IsError || !strings.Contains(mcptool.ResultText(res), "timed out after 1s;") {
		t.Fatalf("slow tool: %q", mcptool.ResultText(res))
	}
	if st := reg.Stats("everything/trigger-long-running-operation"); st.Failures != 1 {
		t.Fatalf("timeout not counted: %+v", st)
	}
	if res := r.call(t, "echo", map[string]any{"message": "still here"}); mcptool.ResultText(res) != "Echo: still here" {
		t.Fatalf("echo after the timeout: %q", mcptool.ResultText(res))
	}

	// Kill the server mid-session: callers get isError results (never a
	// protocol error), the tools stay listed, and the server is restarted.
	before := listTools(t, r.cs)
	pids := childPIDs(t)
	if len(pids) != 1 {
		t.Fatalf("want one child process (the server), got %v", pids)
	}
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	u := r.p.Upstreams()[0]
	waitFor(t, 5*time.Second, "the proxy to see the server die", func() bool { return !u.Status().Up || u.Status().Restarts > 0 })
	refused := 0
	for range 3 {
		res := r.call(t, "echo", map[string]any{"message": "x"})
		if !u.Status().Up && !res.IsError {
			t.Fatalf("a call while the server was down succeeded: %+v", res)
		}
		if res.IsError {
			refused++
			if text := mcptool.ResultText(res); !strings.Contains(text, "; retry in ") && !strings.Contains(text, "; retry now") || strings.Contains(text, "retry in 0s") {
				t.Fatalf("refusal text without a retry hint: %q", text)
			}
		}
	}
	if got := listTools(t, r.cs); fmt.Sprint(got) != fmt.Sprint(before) {
		t.Fatalf("tools changed while the server was down or restarting")
	}
	// Calls refused because the server was down carry no verdict: echo, a
	// healthy tool, is not tripped by them (threshold 2, three calls).
	if st := reg.Stats("everything/echo"); st.Failures != 0 {
		t.Fatalf("calls while the server was down counted against echo: %+v", st)
	}
	waitFor(t, 10*time.Second, "the server to be restarted", func() bool { return u.Status().Up && u.Status().Restarts >= 1 })
	waitFor(t, 10*time.Second, "echo to answer again", func() bool {
		res := r.call(t, "echo", map[string]any{"message": "back"})
		return !res.IsError && mcptool.ResultText(res) == "Echo: back"
	})
	t.Logf("%d of 3 calls while the server was down were answered with isError results", refused)
	if !strings.Contains(r.stderr.String(), "mcp server down") || !strings.Contains(r.stderr.String(), `msg="mcp call"`) {
		t.Fatalf("log lacks the server's death or the call lines:\n%s", r.stderr.String())
	}
}

func TestMCPProxyListenServesMCPAndMetrics(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	argv := everything(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- serveMCPProxy(ctx, append([]string{"--listen", "127.0.0.1:0", "--name", "everything", "--"}, argv...),
			strings.NewReader(""), stdout, stderr)
	}()
	var base string
	waitFor(t, 20*time.Second, "the listening address on stdout", func() bool {
		out := stdout.String()
		i := strings.Index(out, "http://")
		j := strings.Index(out, "/mcp")
		if i < 0 || j < i {
			return false
		}
		base = out[i:j]
		return true
	})
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	client := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect over streamable HTTP: %v\n%s", err, stderr.String())
	}
	if tools := listTools(t, cs); tools["echo"] == "" {
		t.Fatalf("no echo over HTTP: %v", tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "http"}})
	if err != nil || mcptool.ResultText(res) != "Echo: http" {
		t.Fatalf("echo over HTTP: %v %+v", err, res)
	}
	cs.Close()

	get := func(path string) string {
		t.Helper()
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return string(b)
	}
	metrics := get("/metrics")
	for _, want := range []string{
		`loopctl_mcp_calls_total{outcome="success",server="everything",tool="echo"} 1`,
		`loopctl_calls_total{breaker="everything/echo",kind="tool",outcome="success"} 1`,
		`loopctl_breaker_state{breaker="everything/echo",kind="tool",state="closed"} 1`,
		`loopctl_breaker_state{breaker="everything/echo",kind="tool",state="open"} 0`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, metrics)
		}
	}
	if page := get("/dashboard"); !strings.Contains(page, "loopctl mcp-proxy") {
		t.Errorf("/dashboard: %.300s", page)
	}
	if state := get("/dashboard/state.json"); !strings.Contains(state, `"set":"mcp-proxy","name":"everything/echo","state":"closed"`) {
		t.Errorf("/dashboard/state.json: %s", state)
	}
	if ups := get("/upstreams"); !strings.Contains(ups, `"name":"everything","up":true`) {
		t.Errorf("/upstreams: %s", ups)
	}
	hc.CloseIdleConnections()
	cancel()
	if c := <-code; c != ExitOK {
		t.Fatalf("mcp-proxy exited %d: %s", c, stderr.String())
	}
}
