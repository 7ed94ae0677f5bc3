package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// versionServer is an MCP server over streamable HTTP that speaks only
// version (2026-07-28 statelessly, as that protocol has it) and records the
// Mcp-Protocol-Version of every request it gets.
type versionServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newVersionServer(t *testing.T, version string) *versionServer {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "v" + version, Version: "1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{version}})
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo from " + version}}}, nil
		})
	srv.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello from " + version}}}}, nil
	})
	vs := &versionServer{}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: version >= newProtocol})
	vs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
			vs.mu.Lock()
			vs.seen = append(vs.seen, v)
			vs.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(vs.Close)
	return vs
}

// forget drops what was recorded: the handshake's, where a client may try a
// newer version first.
func (vs *versionServer) forget() {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	vs.seen = nil
}

// versions returns the distinct protocol versions the server was asked in.
func (vs *versionServer) versions() []string {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	v := slices.Clone(vs.seen)
	slices.Sort(v)
	return slices.Compact(v)
}

// Each hop negotiates its own protocol version: a client on one version is
// served by the proxy over HTTP, and the proxy's upstream, on the other, is
// asked only in its own version once connected; nothing fails and no breaker or connection
// suffers. Both directions.
func TestMCPProxyVersionPerHop(t *testing.T) {
	for _, c := range []struct{ client, upstream string }{
		{"2026-07-28", "2025-11-25"},
		{"2025-11-25", "2026-07-28"},
	} {
		t.Run("client "+c.client+" upstream "+c.upstream, func(t *testing.T) {
			up := newVersionServer(t, c.upstream)
			uhc := &http.Client{Transport: &http.Transport{}}
			defer uhc.CloseIdleConnections()
			p, err := mcptool.NewProxy(mcptool.ProxyConfig{Upstreams: []mcptool.UpstreamConfig{{Name: "up", Connect: mcptool.StreamableHTTP(up.URL, uhc)}}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			p.Start(ctx)
			defer p.Close()
			up.forget()
			front := httptest.NewServer(mcpHandler(p))
			defer front.Close()
			hc := &http.Client{Transport: &http.Transport{}}
			defer hc.CloseIdleConnections()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx,
				&mcp.StreamableClientTransport{Endpoint: front.URL, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: c.client})
			if err != nil {
				t.Fatalf("a %s client through the proxy: %v", c.client, err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ProtocolVersion; got != c.client {
				t.Fatalf("the client's hop negotiated %s, want %s", got, c.client)
			}
			for range 3 {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
				if err != nil || res.IsError || mcptool.ResultText(res) != "echo from "+c.upstream {
					t.Fatalf("echo: %v %+v", err, res)
				}
				pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
				if err != nil || pr.Messages[0].Content.(*mcp.TextContent).Text != "hello from "+c.upstream {
					t.Fatalf("prompts/get: %v %+v", err, pr)
				}
			}
			if got := up.versions(); !slices.Equal(got, []string{c.upstream}) {
				t.Fatalf("the upstream was asked in %v, want only %s", got, c.upstream)
			}
			if st := p.Upstreams()[0].Status(); !st.Up || st.Restarts != 0 {
				t.Fatalf("the upstream's connection suffered: %+v", st)
			}
		})
	}
}
