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
