package mcptool

import (
	"maps"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Each hop through a Proxy negotiates its own protocol version: the proxy's
// client with the proxy, the proxy with each upstream. What one hop's
// protocol puts in a request's _meta (the version, the client's name and
// capabilities under "io.modelcontextprotocol/") belongs to that hop: a
// request forwarded with it would make the SDK speak the client's version to
// the upstream (its _meta and its Mcp-Protocol-Version header), and an
// upstream on another version refuses it. So forwarded params lose those
// keys, and the upstream's SDK sets its own hop's.

// protocolMetaPrefix starts the _meta keys the protocol reserves for itself.
const protocolMetaPrefix = "io.modelcontextprotocol/"

// withoutProtocolMeta returns p, or a shallow copy of it without the
// protocol's _meta keys if it has any; p is not modified. nil stays nil.
func withoutProtocolMeta[T any, P interface {
	*T
	mcp.Params
}](p P) P {
	if p == nil {
		return nil
	}
	m := p.GetMeta()
	found := false
	for k := range m {
		if strings.HasPrefix(k, protocolMetaPrefix) {
			found = true
			break
		}
	}
	if !found {
		return p
	}
	c := P(new(T))
	*c = *p
	m = maps.Clone(m)
	maps.DeleteFunc(m, func(k string, _ any) bool { return strings.HasPrefix(k, protocolMetaPrefix) })
	if len(m) == 0 {
		m = nil
	}
	c.SetMeta(m)
	return c
}
