package mcptool

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// askingServer is an MCP server on 2025-11-25 (where a server sends its
// requests to the host while it serves a call) whose tool "ask" asks its host
// for a sampling, an elicitation and the roots, and answers what it got.
func askingServer(rootsChanged chan<- struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "asking", Version: "1"}, &mcp.ServerOptions{
		SupportedProtocolVersions: []string{"2025-11-25"},
		RootsListChangedHandler:   func(context.Context, *mcp.RootsListChangedRequest) { rootsChanged <- struct{}{} },
	})
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: objectSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var out []string
			msg, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
			if err != nil {
				out = append(out, "sampling error: "+err.Error())
			} else {
				out = append(out, "sampled: "+msg.Content.(*mcp.TextContent).Text)
			}
			el, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)})
			if err != nil {
				out = append(out, "elicitation error: "+err.Error())
			} else {
				out = append(out, "elicited: "+el.Action+" "+el.Content["name"].(string))
			}
			roots, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				out = append(out, "roots error: "+err.Error())
			} else {
				for _, r := range roots.Roots {
					out = append(out, "root: "+r.URI)
				}
			}
			return textResult(strings.Join(out, "\n")), nil
		})
	return srv
}

// hostClient is a client of p on version that answers sampling, elicitation
// and roots (with all three) or nothing (without).
func hostClient(t *testing.T, p *Proxy, all bool, version string) (*mcp.Client, *mcp.ClientSession) {
	t.Helper()
	opts := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	if all {
		opts = &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m",
					Content: &mcp.TextContent{Text: "echo " + req.Params.Messages[0].Content.(*mcp.TextContent).Text}}, nil
			},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
			},
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, opts)
	if all {
		client.AddRoots(&mcp.Root{URI: "file:///work"})
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := client.Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return client, cs
}

// A server's requests to its host reach the proxy's client that declared the
// capability, and its answers go back; a client without them answers with an
// error the server sees; a change of the client's roots reaches the server.
func TestProxyRelaysRequestsToTheHost(t *testing.T) {
	rootsChanged := make(chan struct{}, 10)
	srv := askingServer(rootsChanged)
	p, err := NewProxy(ProxyConfig{Upstreams: []UpstreamConfig{{Name: "a", Connect: func(ctx context.Context) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p.Start(ctx)
	defer p.Close()
	for ss := range srv.Sessions() {
		c := ss.InitializeParams().Capabilities
		if c.Sampling == nil || c.Elicitation == nil || c.Elicitation.Form == nil || !c.Roots.ListChanged {
			t.Fatalf("the proxy declared %+v to its upstream, want sampling, elicitation and roots", c)
		}
	}

	_, bare := hostClient(t, p, false, "2025-11-25")
	res, err := bare.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
	if err != nil {
		t.Fatal(err)
	}
	// (a go-sdk client with no roots answers an empty list)
	if want := "sampling error: calling \"sampling/createMessage\": no client of the proxy supports sampling\n" +
		"elicitation error: calling \"elicitation/create\": no client of the proxy supports elicitation"; text(res) != want {
		t.Fatalf("with no client offering them the server got %q, want %q", text(res), want)
	}

	// A client on 2025-11-25 is asked directly; one on 2026-07-28 through its
	// call's results (input requests), which its SDK answers and calls again.
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		host, cs := hostClient(t, p, true, version)
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("the client negotiated %s, want %s", got, version)
		}
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask"})
		if err != nil {
			t.Fatal(err)
		}
		if want := "sampled: echo hi\nelicited: accept Ada\nroot: file:///work"; text(res) != want {
			t.Fatalf("%s client: through the proxy the server got %q, want %q", version, text(res), want)
		}
		host.AddRoots(&mcp.Root{URI: "file:///other"})
		<-rootsChanged
	}
}
