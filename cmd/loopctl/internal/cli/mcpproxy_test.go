package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	} {
		code, _, stderr := run(t, append([]string{"mcp-proxy"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("mcp-proxy %q: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, code, stderr, tc.want)
		}
	}
}
