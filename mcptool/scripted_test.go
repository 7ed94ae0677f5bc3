package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scripted is an MCP server written for these tests, reached over in-memory
// pipes, whose tools misbehave on demand: hang, crash the connection, break
// the protocol, answer isError, reject arguments, or take a given time.
type scripted struct {
	srv       *mcp.Server
	refuse    atomic.Bool  // new connections fail
	connects  atomic.Int32 // connections made
	cancelled chan string  // tools whose context was cancelled mid-call
	calls     sync.Map     // tool name -> *atomic.Int32

	mu    sync.Mutex
	conns []net.Conn // the server ends of live connections
}

var objectSchema = json.RawMessage(`{"type":"object"}`)

func newScripted() *scripted {
	s := &scripted{cancelled: make(chan string, 100)}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "scripted", Version: "1"}, nil)
	s.add("echo", "Returns its text argument.", func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
		text, _ := args["text"].(string)
		return textResult(text), nil
	})
	s.add("hang", "Never answers.", func(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		s.cancelled <- "hang"
		return nil, ctx.Err()
	})
	s.add("slow", "Answers after ms milliseconds.", func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
		ms, _ := args["ms"].(float64)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			return textResult("done"), nil
		case <-ctx.Done():
			s.cancelled <- "slow"
			return nil, ctx.Err()
		}
	})
	s.add("toolerr", "Answers isError.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		r := textResult("bad input: n must be positive")
		r.IsError = true
		return r, nil
	})
	s.add("protoerr", "Answers a JSON-RPC error.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return nil, errors.New("internal boom")
	})
	s.add("badparams", "Rejects its arguments as invalid params.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "n is required"}
	})
	s.add("crash", "Kills the connection mid-call.", func(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
		s.crash()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	s.srv.AddTool(&mcp.Tool{
		Name: "weather", InputSchema: objectSchema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`),
	}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.count("weather")
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"temp":21}`}},
			StructuredContent: map[string]any{"temp": 21}}, nil
	})
	return s
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// add registers a tool taking a JSON object.
func (s *scripted) add(name, desc string, fn func(context.Context, map[string]any) (*mcp.CallToolResult, error)) {
	s.srv.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: objectSchema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.count(name)
			var args map[string]any
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, err
				}
			}
			return fn(ctx, args)
		})
}

func (s *scripted) count(name string) {
	c, _ := s.calls.LoadOrStore(name, new(atomic.Int32))
	c.(*atomic.Int32).Add(1)
}

// called returns how many calls of name reached the server.
func (s *scripted) called(name string) int {
	if c, ok := s.calls.Load(name); ok {
		return int(c.(*atomic.Int32).Load())
	}
	return 0
}

// connect is an UpstreamConfig.Connect: a new in-memory connection.
func (s *scripted) connect(ctx context.Context) (mcp.Transport, error) {
	if s.refuse.Load() {
		return nil, errors.New("scripted: connection refused")
	}
	c1, c2 := net.Pipe()
	if _, err := s.srv.Connect(ctx, &mcp.IOTransport{Reader: c2, Writer: c2}, nil); err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.conns = append(s.conns, c2)
	s.mu.Unlock()
	s.connects.Add(1)
	return &mcp.IOTransport{Reader: c1, Writer: c1}, nil
}

// crash breaks every live connection, as a server process dying would.
func (s *scripted) crash() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// waitCancelled waits for the server to see tool's call cancelled.
func (s *scripted) waitCancelled(t *testing.T, tool string) {
	t.Helper()
	select {
	case got := <-s.cancelled:
		if got != tool {
			t.Fatalf("server saw %q cancelled, want %q", got, tool)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the server never saw %q cancelled", tool)
	}
}
