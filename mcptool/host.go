package mcptool

import (
	"context"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a server asks of its host (sampling/createMessage, elicitation/create,
// roots/list) goes, through a Proxy, to the proxy's own client: the one whose
// tool call on that server is in flight (the latest, if several are), else
// any connected client that declared the capability; the answer, or the
// client's error, goes back. A Proxy declares sampling, elicitation and roots
// to every upstream when it connects, before any client of its own has: an
// upstream asking while no client of the proxy can answer gets an error
// saying so.

// hostHooks are what an Upstream's client asks of its host; nil: it has none
// and declares no client capabilities.
type hostHooks interface {
	createMessage(ctx context.Context, u *Upstream, p *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error)
	elicit(ctx context.Context, u *Upstream, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	listRoots(ctx context.Context, u *Upstream, p *mcp.ListRootsParams) (*mcp.ListRootsResult, error)
	elicitationComplete(ctx context.Context, u *Upstream, p *mcp.ElicitationCompleteParams)
}

// callers tracks the client sessions whose tool calls are in flight, per
// upstream, in the order they came.
type callers struct {
	mu sync.Mutex
	in map[*Upstream][]*mcp.ServerSession
}

// enter records that ss has a call in flight on u; the returned func ends it.
func (c *callers) enter(u *Upstream, ss *mcp.ServerSession) func() {
	if ss == nil {
		return func() {}
	}
	c.mu.Lock()
	if c.in == nil {
		c.in = map[*Upstream][]*mcp.ServerSession{}
	}
	c.in[u] = append(c.in[u], ss)
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		s := c.in[u]
		if i := slices.Index(s, ss); i >= 0 {
			c.in[u] = slices.Delete(s, i, i+1)
		}
		if len(c.in[u]) == 0 {
			delete(c.in, u)
		}
	}
}

// latest returns the sessions with calls in flight on u, latest first.
func (c *callers) latest(u *Upstream) []*mcp.ServerSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := slices.Clone(c.in[u])
	slices.Reverse(s)
	return s
}

// host returns the session to ask for u: the latest caller on u whose
// capabilities satisfy has, else any session that does; nil if none.
func (p *Proxy) host(u *Upstream, has func(*mcp.ClientCapabilities) bool) *mcp.ServerSession {
	ok := func(ss *mcp.ServerSession) bool {
		ip := ss.InitializeParams()
		return ip != nil && ip.Capabilities != nil && has(ip.Capabilities)
	}
	for _, ss := range p.callers.latest(u) {
		if ok(ss) {
			return ss
		}
	}
	for ss := range p.server.Sessions() {
		if ok(ss) {
			return ss
		}
	}
	return nil
}

// noHost is the error an upstream gets when no client of the proxy can answer
// what it asked. Not method-not-found, whose text the SDK replaces with the
// method's name: this one says why.
func noHost(what string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "no client of the proxy supports " + what}
}

// createMessage relays sampling/createMessage.
func (p *Proxy) createMessage(ctx context.Context, u *Upstream, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	ss := p.host(u, func(c *mcp.ClientCapabilities) bool { return c.Sampling != nil })
	if ss == nil {
		return nil, noHost("sampling")
	}
	return ss.CreateMessageWithTools(ctx, withoutProtocolMeta(params))
}

// elicit relays elicitation/create.
func (p *Proxy) elicit(ctx context.Context, u *Upstream, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	ss := p.host(u, func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil })
	if ss == nil {
		return nil, noHost("elicitation")
	}
	return ss.Elicit(ctx, withoutProtocolMeta(params))
}

// listRoots relays roots/list. The roots capability cannot be read back from
// what a client declared (the SDK keeps only its listChanged flag), so the
// latest caller is asked, and answers with an error if it has no roots.
func (p *Proxy) listRoots(ctx context.Context, u *Upstream, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	ss := p.host(u, func(*mcp.ClientCapabilities) bool { return true })
	if ss == nil {
		return nil, noHost("roots")
	}
	return ss.ListRoots(ctx, withoutProtocolMeta(params))
}

// elicitationComplete relays notifications/elicitation/complete (the end of a
// URL elicitation) to the client the elicitation went to, or every client.
func (p *Proxy) elicitationComplete(ctx context.Context, u *Upstream, params *mcp.ElicitationCompleteParams) {
	if ss := p.host(u, func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil }); ss != nil {
		ss.NotifyElicitationComplete(ctx, withoutProtocolMeta(params))
	}
}

// rootsChanged tells every upstream that a client's roots changed. The SDK's
// only way to send notifications/roots/list_changed is a change to the
// client's own roots; the list it keeps is never served (roots/list goes to
// the host), so a marker root is re-added.
func (p *Proxy) rootsChanged() {
	for _, u := range p.upstreams {
		u.client.AddRoots(&mcp.Root{URI: "loopctl:roots-changed", Name: "roots changed"})
	}
}

// hostRequests is the upstream client's receiving middleware for a proxy:
// roots/list is answered by the host, not from the client's own list.
func hostRequests(u *Upstream) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "roots/list" && u.host != nil {
				params, _ := req.GetParams().(*mcp.ListRootsParams)
				return u.host.listRoots(ctx, u, params)
			}
			return next(ctx, method, req)
		}
	}
}
