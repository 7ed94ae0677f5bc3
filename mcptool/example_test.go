package mcptool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Proxy in front of one MCP server whose "search" tool is broken: two
// failures trip its breaker, and the third call is refused with a result the
// model can act on, with the same facts under _meta.
func ExampleProxy() {
	server := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{Name: "search", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("index unavailable") // a JSON-RPC error: a failure
		})
	connect := func(ctx context.Context) (mcp.Transport, error) { // in memory, for the example
		client, srv := mcp.NewInMemoryTransports()
		if _, err := server.Connect(ctx, srv, nil); err != nil {
			return nil, err
		}
		return client, nil
	}

	p, err := mcptool.NewProxy(mcptool.ProxyConfig{
		Upstreams: []mcptool.UpstreamConfig{{Name: "web", Connect: connect}},
		Breaker:   breaker.Settings{FailureThreshold: 2},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	p.Start(ctx)
	defer p.Close()

	for range 3 {
		res, info, _ := p.Call(ctx, "search", json.RawMessage(`{"q":"breakers"}`))
		fmt.Println(info.Outcome, res.IsError)
		if info.Outcome == mcptool.OutcomeRefused {
			fmt.Println(mcptool.ResultText(res))
			m := res.Meta[mcptool.MetaKey].(mcptool.CallMeta)
			fmt.Println(m.Breaker, m.State, m.RetryMs)
		}
	}
	// Output:
	// failure true
	// failure true
	// refused true
	// tool temporarily unavailable: circuit breaker open for tool 'search' (server 'web'); retry in 30s; no other tool can serve it
	// web/search open 30000
}

// The tools of an MCP server as agent tools: named server__tool (each its own
// breaker in the agent's registry), idempotent only when the server says so.
func ExampleAgentTools() {
	server := mcp.NewServer(&mcp.Implementation{Name: "files", Version: "1"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	server.AddTool(&mcp.Tool{Name: "read_file", Description: "Reads a file.", InputSchema: schema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}, nil
		})
	server.AddTool(&mcp.Tool{Name: "delete_file", Description: "Deletes a file.", InputSchema: schema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted"}}}, nil
		})
	up, err := mcptool.NewUpstream(mcptool.UpstreamConfig{Name: "files",
		Connect: func(ctx context.Context) (mcp.Transport, error) {
			client, srv := mcp.NewInMemoryTransports()
			_, err := server.Connect(ctx, srv, nil)
			return client, err
		}})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	up.Start(ctx)
	defer up.Close()
	up.WaitFirst(ctx)

	for _, t := range mcptool.AgentTools(up, mcptool.AgentOptions{}) {
		out, _ := t.Func(ctx, json.RawMessage(`{"path":"a.txt"}`))
		fmt.Printf("%s idempotent=%v: %s\n", t.Name, !t.NotIdempotent, out)
	}
	// Output:
	// files__delete_file idempotent=false: deleted
	// files__read_file idempotent=true: hello
}
