package cli

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/dashboard"
)

func TestCommandName(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"npx", "-y", "@modelcontextprotocol/server-everything"}, "server-everything"},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-filesystem@2025.1.1", "/tmp"}, "server-filesystem"},
		{[]string{"node", "/x/node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"}, "server-everything"},
		{[]string{"uvx", "mcp-server-fetch"}, "mcp-server-fetch"},
		{[]string{"python3", "weather.py"}, "weather"},
		{[]string{"./my_server"}, "my-server"},
	} {
		if got := commandName(tc.argv); got != tc.want {
			t.Errorf("commandName(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func TestMCPProxyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "no upstream"},
		{[]string{"--name", "x"}, "--name names the upstream given after --"},
		{[]string{"--timeout", "0s", "--", "true"}, "--timeout must be positive"},
		{[]string{"--listen", "0.0.0.0:80", "--", "true"}, "loopback only"},
		{[]string{"--stdio", "nocommand", "--", "true"}, "want NAME=COMMAND"},
		{[]string{"--stdio", "a=x", "--stdio", "a=y"}, `two upstreams are named "a"`},
		{[]string{"--stdio", "a__b=x"}, `must not contain "__"`},
		{[]string{"--log-format", "xml", "--", "true"}, "want text or json"},
		{[]string{"--config", write("unknown.json", `{"mcpServers":{},"colour":1}`)}, `unknown field "colour"`},
		{[]string{"--config", write("both.json", `{"mcpServers":{"a":{"command":"x","url":"http://h"}}}`)}, "mcpServers.a: has both command and url"},
		{[]string{"--config", write("dur.json", `{"mcpServers":{"a":{"command":"x"}},"tools":{"a/t":{"timeout":"soon"}}}`)}, `tools.a/t.timeout: "soon" is not a duration`},
		{[]string{"--config", write("key.json", `{"mcpServers":{"a":{"command":"x"}},"tools":{"t":{}}}`)}, `tools.t: keys are "server/tool"`},
		// SEMANTICS §8.1, §8.2: the rev 4 keys of "breaker", each error naming its key path.
		{[]string{"--config", write("rate.json", `{"mcpServers":{"a":{"command":"x"}},"breaker":{"failure_rate":1.5}}`)}, "breaker.failure_rate: must be within [0, 1] (got 1.5)"},
		{[]string{"--config", write("rate2.json", `{"mcpServers":{"a":{"command":"x"}},"breaker":{"failure_rate":-0.1}}`)}, "breaker.failure_rate: must be within [0, 1]"},
		{[]string{"--config", write("win.json", `{"mcpServers":{"a":{"command":"x"}},"breaker":{"rate_window":"-1s"}}`)}, `breaker.rate_window: "-1s" is not a duration`},
		{[]string{"--config", write("min.json", `{"mcpServers":{"a":{"command":"x"}},"breaker":{"rate_min_calls":-1}}`)}, "breaker.rate_min_calls: must not be negative"},
		{[]string{"--config", write("slow.json", `{"mcpServers":{"a":{"command":"x"}},"breaker":{"slow_call_after":"soon","slow_call_rate":0.5}}`)}, `breaker.slow_call_after: "soon" is not a duration`},
		{[]string{"--config", write("slowr.json", `{"mcpServers":{"a":{"command":"x"}},"breaker":{"slow_call_after":"1s","slow_call_rate":2}}`)}, "breaker.slow_call_rate: must be within [0, 1]"},
		{[]string{"--config", write("slow1.json", `{"mcpServers":{"a":{"command":"x"}},"breaker":{"slow_call_after":"1s"}}`)}, "breaker.slow_call_after: needs breaker.slow_call_rate"},
		{[]string{"--config", write("slow2.json", `{"mcpServers":{"a":{"command":"x"}},"breaker":{"slow_call_rate":0.5}}`)}, "breaker.slow_call_rate: needs breaker.slow_call_after"},
	} {
		code, _, stderr := run(t, append([]string{"mcp-proxy"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("mcp-proxy %q: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}

// TestMCPProxyRateKeys (SEMANTICS §8.1, §8.2): the "breaker" section's rev 4
// keys reach every tool's breaker: with failure_rate 0.5 over 4 calls a tool
// failing 2 calls in 4 (never two in a row, under failureThreshold 3) trips;
// slow calls trip another by their time to first content.
func TestMCPProxyRateKeys(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "proxy.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"a":{"command":"x"}},
		"breaker":{"failureThreshold":3,"failure_rate":0.5,"rate_window":"1m","rate_min_calls":4,
			"slow_call_after":"2s","slow_call_rate":0.5}}`), 0o644)
	s := proxySettings{failureThreshold: 3, cooldown: time.Minute, probeTimeout: time.Minute}
	if err := loadProxyFile(cfg, &s); err != nil {
		t.Fatal(err)
	}
	r := s.rate
	if r.FailureRate != 0.5 || r.RateWindow != time.Minute || r.RateMinCalls != 4 || r.SlowCallAfter != 2*time.Second || r.SlowCallRate != 0.5 {
		t.Fatalf("rate settings %+v", r)
	}
	reg, err := newProxyRegistry(s, newProxyMetrics(), dashboard.NewLog(10), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		p, _ := reg.Allow("a/flaky")
		p.Done(map[bool]error{true: errors.New("boom")}[i%2 == 1])
		q, _ := reg.Allow("a/slow")
		q.SuccessAfter(3 * time.Second)
	}
	for _, tool := range []string{"a/flaky", "a/slow"} {
		if st := reg.Breaker(tool).State(); st != breaker.Open {
			t.Errorf("%s: %v, want open", tool, st)
		}
	}
}
