package mcptool

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchClient connects a go-sdk client to t over in-memory pipes.
func benchClient(b *testing.B, connect func(context.Context, mcp.Transport) error) *mcp.ClientSession {
	ct, st := mcp.NewInMemoryTransports()
	if err := connect(context.Background(), st); err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// benchCalls calls echo on cs b.N times.
func benchCalls(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	args := json.RawMessage(`{"text":"hi"}`)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkDirect: a client calling the upstream server directly.
func BenchmarkDirect(b *testing.B) {
	s := newScripted()
	b.Cleanup(s.crash)
	cs := benchClient(b, func(ctx context.Context, t mcp.Transport) error {
		_, err := s.srv.Connect(ctx, t, nil)
		return err
	})
	benchCalls(b, cs)
}

// BenchmarkProxy: the same calls through a Proxy (one more MCP hop, the
// breaker, the deadline). Its difference to BenchmarkDirect is the proxy's
// added latency.
func BenchmarkProxy(b *testing.B) {
	s := newScripted()
	p, err := NewProxy(ProxyConfig{Upstreams: []UpstreamConfig{{Name: "s", Connect: s.connect}}})
	if err != nil {
		b.Fatal(err)
	}
	p.Start(context.Background())
	b.Cleanup(func() { p.Close(); s.crash() })
	cs := benchClient(b, func(ctx context.Context, t mcp.Transport) error {
		_, err := p.Server().Connect(ctx, t, nil)
		return err
	})
	benchCalls(b, cs)
}

// BenchmarkProxyGate: the proxy's own work per call, without the client hop:
// Proxy.Call (breaker gate, deadline, verdict, result) against the upstream.
func BenchmarkProxyGate(b *testing.B) {
	s := newScripted()
	p, err := NewProxy(ProxyConfig{Upstreams: []UpstreamConfig{{Name: "s", Connect: s.connect}}})
	if err != nil {
		b.Fatal(err)
	}
	p.Start(context.Background())
	b.Cleanup(func() { p.Close(); s.crash() })
	ctx := context.Background()
	args := json.RawMessage(`{"text":"hi"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res, _, err := p.Call(ctx, "echo", args); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkUpstreamCall: Upstream.CallTool alone, the baseline of BenchmarkProxyGate.
func BenchmarkUpstreamCall(b *testing.B) {
	s := newScripted()
	u, err := NewUpstream(UpstreamConfig{Name: "s", Connect: s.connect})
	if err != nil {
		b.Fatal(err)
	}
	u.Start(context.Background())
	u.WaitFirst(context.Background())
	b.Cleanup(func() { u.Close(); s.crash() })
	ctx := context.Background()
	args := json.RawMessage(`{"text":"hi"}`)
	b.ReportAllocs()
	for b.Loop() {
		if res, err := u.CallTool(ctx, "echo", args); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
