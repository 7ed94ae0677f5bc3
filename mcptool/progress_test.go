package mcptool

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordingTransport records the methods of the messages its connection
// reads ("result" for a response), in order.
type recordingTransport struct {
	mcp.Transport
	mu  sync.Mutex
	got []string
}

func (t *recordingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recordingConn{Connection: c, t: t}, nil
}

func (t *recordingTransport) read() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.got...)
}

type recordingConn struct {
	mcp.Connection
	t *recordingTransport
}

func (c *recordingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.t.mu.Lock()
		switch m := msg.(type) {
		case *jsonrpc.Request:
			c.t.got = append(c.t.got, m.Method)
		case *jsonrpc.Response:
			c.t.got = append(c.t.got, "result")
		}
		c.t.mu.Unlock()
	}
	return msg, err
}

// burstServer is an MCP server whose tool "burst" sends three progress
// notifications and returns at once after the last.
func burstServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "burst", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "burst", InputSchema: objectSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			token := req.Params.GetProgressToken()
			for i := range 3 {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(50 * i), Total: 100})
			}
			return textResult("done"), nil
		})
	return srv
}

// Every progress notification of a call reaches the client, in order and
// before the result, over stdio-like pipes and over streamable HTTP; the
// last one, sent just before the result, is not dropped.
func TestProxyRelaysEveryProgressBeforeTheResult(t *testing.T) {
	for _, over := range []string{"pipes", "http"} {
		t.Run(over, func(t *testing.T) {
			srv := burstServer()
			var connect func(context.Context) (mcp.Transport, error)
			if over == "http" {
				hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
				defer hs.Close()
				hc := &http.Client{Transport: &http.Transport{}}
				defer hc.CloseIdleConnections()
				connect = StreamableHTTP(hs.URL, hc)
			} else {
				connect = func(ctx context.Context) (mcp.Transport, error) {
					ct, st := mcp.NewInMemoryTransports()
					if _, err := srv.Connect(ctx, st, nil); err != nil {
						return nil, err
					}
					return ct, nil
				}
			}
			p, err := NewProxy(ProxyConfig{Upstreams: []UpstreamConfig{{Name: "b", Connect: connect}}})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			p.Start(ctx)
			defer p.Close()
			ct, st := mcp.NewInMemoryTransports()
			ss, err := p.Server().Connect(ctx, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			rec := &recordingTransport{Transport: ct}
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(ctx, rec, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { cs.Close(); ss.Wait() }()
			for run := range 20 {
				before := len(rec.read())
				params := &mcp.CallToolParams{Name: "burst"}
				params.SetProgressToken(fmt.Sprint("run-", run))
				if res, err := cs.CallTool(ctx, params); err != nil || text(res) != "done" {
					t.Fatalf("run %d: %v %q", run, err, text(res))
				}
				got := rec.read()[before:]
				want := []string{"notifications/progress", "notifications/progress", "notifications/progress", "result"}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("run %d: the client read %v, want %v", run, got, want)
				}
			}
		})
	}
}
