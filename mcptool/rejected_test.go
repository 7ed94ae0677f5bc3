package mcptool

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// refusingVersions answers a tools/call of tool "plain" with the go-sdk's
// plain-text 400 about the protocol version, and of tool "jsonrpc" with the
// TypeScript SDK's (a JSON-RPC error in a 400); everything else reaches next.
func refusingVersions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		call := bytes.Contains(body, []byte(`"tools/call"`))
		switch {
		case call && bytes.Contains(body, []byte(`"name":"plain"`)):
			http.Error(w, "Bad Request: Unsupported protocol version (supported versions: 2025-11-25)", http.StatusBadRequest)
		case call && bytes.Contains(body, []byte(`"name":"jsonrpc"`)):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Unsupported protocol version: 2026-07-28 (supported versions: 2025-11-25)"},"id":null}`)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// A 400 about the protocol version, in either SDK's shape, is no verdict on
// the tool: its breaker (tripped by one failure here) stays closed however
// often it comes, the outcome is rejected, and the connection stays up.
func TestProtocolRejectionTripsNothing(t *testing.T) {
	s := newScripted()
	for _, name := range []string{"plain", "jsonrpc"} {
		s.add(name, "Refused by the HTTP layer.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
			return textResult("not reached"), nil
		})
	}
	srv := httptest.NewServer(refusingVersions(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, nil)))
	defer srv.Close()
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	p, err := NewProxy(ProxyConfig{
		Upstreams: []UpstreamConfig{{Name: "web", Connect: StreamableHTTP(srv.URL, hc)}},
		Breaker:   breaker.Settings{FailureThreshold: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p.Start(ctx)
	defer p.Close()
	for _, name := range []string{"plain", "jsonrpc"} {
		for range 5 {
			res, info, err := p.Call(ctx, name, nil)
			if err != nil || !res.IsError || info.Outcome != OutcomeRejected || !strings.Contains(text(res), "protocol version") {
				t.Fatalf("%s: %v %q %+v", name, err, text(res), info)
			}
		}
		if st := p.Registry().Breaker("web/" + name).State(); st != breaker.Closed {
			t.Fatalf("%s: breaker %v after protocol rejections, want closed", name, st)
		}
	}
	if !p.Upstreams()[0].Status().Up {
		t.Fatalf("the upstream went down on a protocol rejection: %+v", p.Upstreams()[0].Status())
	}
	if res, info, err := p.Call(ctx, "echo", []byte(`{"text":"still here"}`)); err != nil || text(res) != "still here" || info.Outcome != OutcomeSuccess {
		t.Fatalf("echo after the rejections: %v %q %+v", err, text(res), info)
	}
}
