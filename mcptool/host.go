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

// caller is a client session with a tool call in flight; pc is set when the
// client is on 2026-07-28 or later, which is asked through its call's result
// (see multiround.go) rather than by a request of its own.
type caller struct {
	ss *mcp.ServerSession
	pc *pendingCall
}

// callers tracks the clients whose tool calls are in flight, per upstream, in
// the order they came.
type callers struct {
	mu sync.Mutex
	in map[*Upstream][]caller
}

// enter records that c has a call in flight on u; the returned func ends it.
func (cs *callers) enter(u *Upstream, c caller) func() {
	if c.ss == nil {
		return func() {}
	}
	cs.mu.Lock()
	if cs.in == nil {
		cs.in = map[*Upstream][]caller{}
	}
	cs.in[u] = append(cs.in[u], c)
	cs.mu.Unlock()
	return func() {
		cs.mu.Lock()
		defer cs.mu.Unlock()
		s := cs.in[u]
		if i := slices.Index(s, c); i >= 0 {
			cs.in[u] = slices.Delete(s, i, i+1)
		}
		if len(cs.in[u]) == 0 {
			delete(cs.in, u)
		}
	}
}

// latest returns the callers with calls in flight on u, latest first.
func (cs *callers) latest(u *Upstream) []caller {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	s := slices.Clone(cs.in[u])
	slices.Reverse(s)
	return s
}

// host returns the client to ask for u: the latest caller on u whose
// capabilities satisfy has, else any session that does; ok is false if none.
func (p *Proxy) host(u *Upstream, has func(*mcp.ClientCapabilities) bool) (c caller, ok bool) {
	fits := func(ss *mcp.ServerSession) bool {
		ip := ss.InitializeParams()
		return ip != nil && ip.Capabilities != nil && has(ip.Capabilities)
	}
	for _, c := range p.callers.latest(u) {
		if fits(c.ss) {
			return c, true
		}
	}
	for ss := range p.server.Sessions() {
		if fits(ss) && !multiRound(ss) { // outside a call, a new-protocol client cannot be asked
			return caller{ss: ss}, true
		}
	}
	return caller{}, false
}

// noHost is the error an upstream gets when no client of the proxy can answer
// what it asked. Not method-not-found, whose text the SDK replaces with the
// method's name: this one says why.
func noHost(what string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "no client of the proxy supports " + what}
}

// createMessage relays sampling/createMessage.
func (p *Proxy) createMessage(ctx context.Context, u *Upstream, params *mcp.CreateMessageWithToolsParams) (*mcp.CreateMessageWithToolsResult, error) {
	c, ok := p.host(u, func(c *mcp.ClientCapabilities) bool { return c.Sampling != nil })
	if !ok {
		return nil, noHost("sampling")
	}
	params = withoutProtocolMeta(params)
	if c.pc != nil {
		return askAs[*mcp.CreateMessageWithToolsResult](ctx, c.pc, params)
	}
	return c.ss.CreateMessageWithTools(ctx, params)
}

// elicit relays elicitation/create.
func (p *Proxy) elicit(ctx context.Context, u *Upstream, params *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	c, ok := p.host(u, func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil })
	if !ok {
		return nil, noHost("elicitation")
	}
	params = withoutProtocolMeta(params)
	if c.pc != nil {
		return askAs[*mcp.ElicitResult](ctx, c.pc, params)
	}
	return c.ss.Elicit(ctx, params)
}

// listRoots relays roots/list. The roots capability cannot be read back from
// what a client declared (the SDK keeps only its listChanged flag), so the
// latest caller is asked, and answers with an error if it has no roots.
func (p *Proxy) listRoots(ctx context.Context, u *Upstream, params *mcp.ListRootsParams) (*mcp.ListRootsResult, error) {
	c, ok := p.host(u, func(*mcp.ClientCapabilities) bool { return true })
	if !ok {
		return nil, noHost("roots")
	}
	if params == nil {
		params = &mcp.ListRootsParams{}
	}
	params = withoutProtocolMeta(params)
	if c.pc != nil {
		return askAs[*mcp.ListRootsResult](ctx, c.pc, params)
	}
	return c.ss.ListRoots(ctx, params)
}

// elicitationComplete relays notifications/elicitation/complete (the end of a
// URL elicitation) to the client the elicitation went to.
func (p *Proxy) elicitationComplete(ctx context.Context, u *Upstream, params *mcp.ElicitationCompleteParams) {
	if c, ok := p.host(u, func(c *mcp.ClientCapabilities) bool { return c.Elicitation != nil }); ok {
		c.ss.NotifyElicitationComplete(ctx, withoutProtocolMeta(params))
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
