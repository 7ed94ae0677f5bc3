package mcptool

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An upstream over streamable HTTP: its tools are served and forwarded; when
// the server goes away calls fail (and count) without a protocol error.
func TestProxyStreamableHTTPUpstream(t *testing.T) {
	s := newScripted()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.srv }, nil))
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
	if !p.Upstreams()[0].Status().Up {
		t.Fatalf("HTTP upstream not up: %+v", p.Upstreams()[0].Status())
	}
	res, info, err := p.Call(ctx, "echo", []byte(`{"text":"over http"}`))
	if err != nil || ResultText(res) != "over http" || info.Outcome != OutcomeSuccess {
		t.Fatalf("echo over HTTP: %v %q %+v", err, ResultText(res), info)
	}
	srv.CloseClientConnections()
	srv.Close()
	for ss := range s.srv.Sessions() { // the handler keeps its sessions: end them as a dying server would
		ss.Close()
	}
	res, info, err = p.Call(ctx, "echo", []byte(`{"text":"gone"}`))
	// Either the call fails on the broken connection (a failure, which trips
	// echo) or the upstream already knows it is down (not sent, no verdict).
	first := info.Outcome
	if err != nil || !res.IsError || first != OutcomeFailure && first != OutcomeServerDown || first == OutcomeServerDown && !errors.Is(info.Err, ErrDown) {
		t.Fatalf("echo after the server went away: %v %q %+v", err, ResultText(res), info)
	}
	want := map[Outcome]Outcome{OutcomeFailure: OutcomeRefused, OutcomeServerDown: OutcomeServerDown}[first]
	if _, info, _ = p.Call(ctx, "echo", nil); info.Outcome != want {
		t.Fatalf("after a %s: %+v, want %s", first, info, want)
	}
}
