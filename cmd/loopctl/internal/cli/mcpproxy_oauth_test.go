package cli

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/internal/oauthtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Each bad "oauth" value is a usage error naming its key path, and the token
// file defaults to the user's config directory or resolves against the
// config file's.
func TestMCPProxyOAuthConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	for i, tc := range []struct{ oauth, want string }{
		{`{"command":"x","oauth":{}}`, "mcpServers.a.oauth: only a server with a url takes oauth"},
		{`{"url":"http://127.0.0.1:1/mcp","oauth":{"client_secret":"s"}}`, "mcpServers.a.oauth.client_secret: needs client_id"},
		{`{"url":"http://127.0.0.1:1/mcp","oauth":{"redirect_port":70000}}`, "mcpServers.a.oauth.redirect_port: must be a port number (got 70000)"},
		{`{"url":"http://127.0.0.1:1/mcp","oauth":{"scopes":["read write"]}}`, `mcpServers.a.oauth.scopes[0]: "read write" is not one scope`},
		{`{"url":"http://127.0.0.1:1/mcp","oauth":{"scope":"x"}}`, `unknown field "scope"`},
	} {
		name := write(fmt.Sprintf("c%d.json", i), `{"mcpServers":{"a":`+tc.oauth+`}}`)
		code, _, stderr := run(t, "mcp-proxy", "--config", name)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 mentioning %q", tc.oauth, code, stderr, tc.want)
		}
	}
	open := write("open-token.json", `{}`)
	os.Chmod(open, 0o644)
	name := write("open.json", `{"mcpServers":{"a":{"url":"http://127.0.0.1:1/mcp","oauth":{"token_file":"open-token.json"}}}}`)
	if code, _, stderr := run(t, "mcp-proxy", "--config", name); code != ExitUsage || !strings.Contains(stderr, "mcpServers.a.oauth: token file "+open+" is readable by group or others (mode 0644): chmod 600") {
		t.Errorf("a token file others may read: exit %d, %q", code, stderr)
	}
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	var s proxySettings
	cfg := write("ok.json", `{"mcpServers":{"a":{"url":"http://h/mcp","oauth":{}},"b":{"url":"http://h/mcp","oauth":{"token_file":"t/b.json"}}}}`)
	if err := loadProxyFile(cfg, &s); err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "xdg", "loopctl", "mcp-proxy", "oauth", "a.json"), filepath.Join(dir, "t", "b.json")}
	for i, spec := range s.servers {
		if spec.oauth.tokenFile != want[i] {
			t.Errorf("%s: token file %q, want %q", spec.name, spec.oauth.tokenFile, want[i])
		}
	}
}

// login prints the authorization URL, gets the code through its loopback
// redirect when a browser opens that URL, and stores the token; mcp-proxy
// then serves the server's tools with it. Before the login the tools say to
// run it. No token reaches stdout or stderr.
func TestMCPProxyLoginThenServe(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo"}}}, nil
		})
	fake := oauthtest.New(srv)
	t.Cleanup(fake.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "proxy.json")
	os.WriteFile(cfg, []byte(`{"mcpServers":{"protected":{"url":"`+fake.MCPURL+`","oauth":{"token_file":"tokens/protected.json"}}}}`), 0o644)
	var logs syncBuffer
	if got := callThroughProxy(t, cfg, &logs); !strings.Contains(got, "run `loopctl mcp-proxy login protected`") {
		t.Fatalf("before login: %q", got)
	}

	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- serveMCPProxy(context.Background(), []string{"login", "--config", cfg, "--wait", "30s", "protected"}, nil, &out, &errb)
	}()
	var authURL string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("login's stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
	})
	waitFor(t, 10*time.Second, "the authorization URL", func() bool {
		for _, line := range strings.Split(out.String(), "\n") {
			if u, ok := strings.CutPrefix(line, "  "); ok && strings.HasPrefix(u, fake.AS.URL) {
				authURL = u
				return true
			}
		}
		return false
	})
	if status, err := oauthtest.Visit(context.Background(), authURL); err != nil || status != 200 {
		t.Fatalf("the browser: %d, %v", status, err)
	}
	if code := <-done; code != 0 || !strings.Contains(out.String(), "Authorized") {
		t.Fatalf("login: exit %d\nstdout %s\nstderr %s", code, out.String(), errb.String())
	}
	if st, err := os.Stat(filepath.Join(dir, "tokens", "protected.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v", err)
	}
	if p := fake.Problems(); len(p) > 0 {
		t.Fatalf("the fake saw: %v", p)
	}
	if got := callThroughProxy(t, cfg, &logs); got != "echo" {
		t.Fatalf("after login: %q", got)
	}
	for _, text := range []string{out.String(), errb.String(), logs.String()} {
		if strings.Contains(text, oauthtest.AccessPrefix) || strings.Contains(text, oauthtest.RefreshPrefix) {
			t.Fatalf("a token in the output:\n%s", text)
		}
	}
}

// The loopback redirect's page hands the first code (or the refusal) to
// login, and says so to the person.
func TestMCPProxyLoginCallback(t *testing.T) {
	for _, tc := range []struct{ query, page, code, err string }{
		{"?code=c1&state=s1", "authorization received", "c1", ""},
		{"?error=access_denied&error_description=no+thanks", "authorization refused: access_denied no thanks", "", "access_denied no thanks"},
		{"", "authorization refused", "", "authorization refused"},
	} {
		codes := make(chan loginCallback, 1)
		rec := httptest.NewRecorder()
		callbackHandler(codes).ServeHTTP(rec, httptest.NewRequest("GET", "/callback"+tc.query, nil))
		cb := <-codes
		switch {
		case !strings.Contains(rec.Body.String(), tc.page):
			t.Errorf("%q: page %q", tc.query, rec.Body.String())
		case tc.err == "" && (cb.err != nil || cb.res.Code != tc.code || cb.res.State != "s1"):
			t.Errorf("%q: %+v", tc.query, cb)
		case tc.err != "" && (cb.err == nil || !strings.Contains(cb.err.Error(), tc.err)):
			t.Errorf("%q: %v", tc.query, cb.err)
		}
	}
}

// callThroughProxy runs mcp-proxy --config cfg on stdio, calls its tool
// echo once and returns the result's text; the proxy's stderr goes to logs.
func callThroughProxy(t *testing.T, cfg string, logs io.Writer) string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- serveMCPProxy(context.Background(), []string{"--config", cfg}, inR, outW, logs)
		outW.Close()
	}()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	cs.Close()
	if code := <-done; code != 0 {
		t.Fatalf("mcp-proxy: exit %d", code)
	}
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
