package mcptool

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/internal/oauthtest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lockedBuffer is a log sink many goroutines write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// oauthProxy is a proxy whose one upstream, "protected", is the fake's MCP
// server reached with the token file file (no person there), breakers
// tripping at one failure, every log record in logs.
func oauthProxy(t *testing.T, fake *oauthtest.Server, file string, logs *lockedBuffer) *Proxy {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, err := NewOAuthHandler(OAuthOptions{Server: "protected", TokenFile: file, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{}}
	t.Cleanup(hc.CloseIdleConnections)
	p, err := NewProxy(ProxyConfig{
		Upstreams: []UpstreamConfig{{Name: "protected", Connect: StreamableHTTPAuth(fake.MCPURL, hc, h), Logger: logger}},
		Breaker:   breaker.Settings{FailureThreshold: 1},
		Logger:    logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// echoServer is an MCP server with one tool, echo.
func echoServer() *mcp.Server {
	s := newScripted()
	s.add("echo", "Echoes its text.", func(_ context.Context, args map[string]any) (*mcp.CallToolResult, error) {
		t, _ := args["text"].(string)
		return textResult(t), nil
	})
	return s.srv
}

// Without a stored token the upstream is unavailable and lists no tool, and
// a call of one of its tools says to log in: a result with isError, no
// verdict, nothing registered with the authorization server.
func TestOAuthProxyNeedsLogin(t *testing.T) {
	fake := oauthtest.New(echoServer())
	t.Cleanup(fake.Close)
	var logs lockedBuffer
	p := oauthProxy(t, fake, filepath.Join(t.TempDir(), "none.json"), &logs)
	ctx := context.Background()
	p.Start(ctx)
	up := p.Upstreams()[0]
	if st := up.Status(); st.Up || st.Err == nil || !strings.Contains(st.Err.Error(), "run `loopctl mcp-proxy login protected`") {
		t.Fatalf("status %+v: want down, saying to log in", st)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Wait()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for range 3 {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
		if err != nil || !res.IsError || !strings.Contains(text(res), "run `loopctl mcp-proxy login protected`") {
			t.Fatalf("call: %v, %+v", err, res)
		}
	}
	if fake.Count("register") != 0 || fake.Count("authorize") != 0 {
		t.Errorf("serving registered or authorized: %d, %d", fake.Count("register"), fake.Count("authorize"))
	}
}

// The whole flow through the proxy: a login, then a restarted proxy with an
// expired token refreshes it, a revoked access token is refreshed on the 401,
// and once the refresh token is revoked too a call says to log in, with no
// verdict. No token appears in any log record.
func TestOAuthProxyFlowLogsNoToken(t *testing.T) {
	ctx := context.Background()
	fake := oauthtest.New(echoServer())
	t.Cleanup(fake.Close) // after the proxy's cleanup: its streams end first
	file := login(t, ctx, fake)
	expireStored(t, file)
	var logs lockedBuffer
	p := oauthProxy(t, fake, file, &logs)
	p.Start(ctx)
	call := func(want Outcome) string {
		t.Helper()
		res, info, err := p.Call(ctx, "echo", []byte(`{"text":"hi"}`))
		if err != nil || info.Outcome != want {
			t.Fatalf("call: %v, outcome %s, want %s (%q)", err, info.Outcome, want, text(res))
		}
		return text(res)
	}
	call(OutcomeSuccess)
	if fake.Count("refresh") != 1 {
		t.Fatalf("%d refreshes after a start with an expired token, want 1", fake.Count("refresh"))
	}
	fake.RevokeAccess()
	call(OutcomeSuccess)
	if fake.Count("refresh") != 2 {
		t.Fatalf("%d refreshes after the access token was revoked, want 2", fake.Count("refresh"))
	}
	fake.RevokeAll()
	if got := call(OutcomeServerDown); !strings.Contains(got, "loopctl mcp-proxy login protected") {
		t.Fatalf("all revoked: %q", got)
	}
	call(OutcomeServerDown) // and again: the breaker was not tripped
	for _, prefix := range []string{oauthtest.AccessPrefix, oauthtest.RefreshPrefix} {
		if strings.Contains(logs.String(), prefix) {
			t.Fatalf("a token in the logs:\n%s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "protected") {
		t.Fatalf("no log record at all: %q", logs.String())
	}
}
