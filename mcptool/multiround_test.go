package mcptool

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A new-protocol client coming back with a request state the proxy does not
// hold (its call ended, or it never began) gets an isError result saying so,
// and nothing reaches the upstream or a breaker.
func TestMultiRoundUnknownState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		h := start(t, ProxyConfig{}, map[string]*scripted{"s": s})
		if v := h.cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("the harness's client is on %s, want 2026-07-28", v)
		}
		res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", RequestState: "loopctl-call-999",
			Arguments: map[string]any{"text": "x"}})
		if err != nil || !res.IsError || !strings.Contains(text(res), `request state "loopctl-call-999" is unknown`) {
			t.Fatalf("an unknown request state: %v %q", err, text(res))
		}
		if n := s.called("echo"); n != 0 || len(h.calls) != 0 {
			t.Fatalf("the upstream got %d calls, the breakers %d", n, len(h.calls))
		}
	})
}
