package mcptool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerUnknown makes s answer a call of a tool it does not have as the
// TypeScript SDK's McpServer does (ts: a result with isError), or with a
// JSON-RPC error of its own (to tell it from the proxy's).
func answerUnknown(s *scripted, ts bool) {
	s.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if werr, ok := errors.AsType[*jsonrpc.Error](err); ok && method == "tools/call" && werr.Code == jsonrpc.CodeInvalidParams {
				name := req.GetParams().(*mcp.CallToolParamsRaw).Name
				if !ts {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "upstream: no tool " + name}
				}
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "MCP error -32602: Tool " + name + " not found"}}}, nil
			}
			return res, err
		}
	})
}

// A call of a tool the proxy does not serve is answered with what the server
// its name points at says, in that server's shape, with no breaker involved;
// a name pointing at no server is the proxy's own JSON-RPC error.
func TestProxyRelaysUnknownToolAnswers(t *testing.T) {
	cases := []struct {
		name    string
		servers []string // the upstreams; the first answers unknown tools (see answerUnknown)
		ts      bool
		call    string
		want    string // the result's text, or the JSON-RPC error's text
		isErr   bool   // a result with isError (else a JSON-RPC error)
		code    int64
	}{
		{name: "JSON-RPC error", servers: []string{"s"}, call: "nosuch", want: "upstream: no tool nosuch", code: jsonrpc.CodeInvalidParams},
		{name: "typescript server", servers: []string{"s"}, ts: true, call: "nosuch", want: "MCP error -32602: Tool nosuch not found", isErr: true},
		{name: "prefixed", servers: []string{"a", "b"}, ts: true, call: "a__nosuch", want: "MCP error -32602: Tool nosuch not found", isErr: true},
		{name: "no such server", servers: []string{"a", "b"}, call: "zzz__x", want: "unknown tool", code: jsonrpc.CodeInvalidParams},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				servers := map[string]*scripted{}
				for i, name := range c.servers {
					servers[name] = newScripted()
					if i == 0 {
						answerUnknown(servers[name], c.ts)
					}
				}
				h := start(t, ProxyConfig{}, servers)
				res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.call})
				if c.isErr {
					if err != nil || !res.IsError || text(res) != c.want || res.Meta[MetaKey] != nil {
						t.Fatalf("%s: %v %+v, want the server's isError result %q", c.call, err, res, c.want)
					}
				} else {
					werr, ok := errors.AsType[*jsonrpc.Error](err)
					if !ok || werr.Code != c.code || !strings.Contains(werr.Message, c.want) {
						t.Fatalf("%s: %v %+v, want JSON-RPC error %d %q", c.call, err, res, c.code, c.want)
					}
				}
				if len(h.calls) != 0 {
					t.Fatalf("an unknown tool reached a breaker: %+v", <-h.calls)
				}
			})
		})
	}
}
