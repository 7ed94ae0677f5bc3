package mcptool

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Forwarded params lose the protocol's own _meta keys, keep the others, and
// the caller's params are never modified.
func TestWithoutProtocolMeta(t *testing.T) {
	for _, c := range []struct {
		name string
		meta mcp.Meta
		want string // the forwarded _meta
	}{
		{"none", nil, "map[]"},
		{"only others", mcp.Meta{"progressToken": "t", "x/y": 1}, "map[progressToken:t x/y:1]"},
		{"only the protocol's", mcp.Meta{"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientInfo": map[string]any{"name": "c"}}, "map[]"},
		{"both", mcp.Meta{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "progressToken": 7}, "map[progressToken:7]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := &mcp.GetPromptParams{Name: "p", Meta: c.meta}
			before := fmt.Sprint(in.Meta)
			out := withoutProtocolMeta(in)
			if got := fmt.Sprint(map[string]any(out.GetMeta())); got != c.want || out.Name != "p" {
				t.Fatalf("forwarded %s (name %q), want %s", got, out.Name, c.want)
			}
			if fmt.Sprint(in.Meta) != before {
				t.Fatalf("the caller's params changed: %v, were %s", in.Meta, before)
			}
		})
	}
	if withoutProtocolMeta((*mcp.ReadResourceParams)(nil)) != nil {
		t.Fatal("nil params did not stay nil")
	}
}
