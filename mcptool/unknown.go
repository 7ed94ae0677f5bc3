package mcptool

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call of a tool the proxy does not serve (a name the model made up, or a
// tool the server added since its last listing) goes to the server the name
// points at: the only one (unless every name is prefixed), or the one whose
// name is its "server__" prefix. What that server says is the answer, in its
// own shape: a result (the TypeScript SDK answers an unknown tool with
// isError) or a JSON-RPC error (the go-sdk's -32602), as a client talking to
// the server directly would get. No breaker is involved: there is no known
// tool to judge. A name that points at no server, or at one that is down, is
// answered by the proxy's SDK (an unknown-tool error), unless that server
// is down for want of an OAuth login: then an isError result says so.

// unknownTool forwards a tools/call of a name p does not serve; ok is false
// when the name points at no server that is up.
func (p *Proxy) unknownTool(ctx context.Context, req mcp.Request) (res mcp.Result, ok bool, err error) {
	params, _ := req.GetParams().(*mcp.CallToolParamsRaw)
	if params == nil {
		return nil, false, nil
	}
	p.mu.Lock()
	_, known := p.tools[params.Name]
	p.mu.Unlock()
	if known {
		return nil, false, nil
	}
	u, tool := p.pointedAt(params.Name)
	if u == nil {
		return nil, false, nil
	}
	if st := u.Status(); !st.Up {
		// A server never reached for want of a login has listed no tool:
		// its calls say what a person must do.
		if login, isLogin := errors.AsType[*LoginRequiredError](st.Err); isLogin {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: login.Error()}}}, true, nil
		}
		return nil, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.toolOptions(u.Name()+"/"+tool).Timeout)
	defer cancel()
	r, err := u.CallTool(ctx, tool, params.Arguments)
	if werr, isWire := errors.AsType[*jsonrpc.Error](err); isWire {
		return nil, true, werr
	}
	if err != nil {
		return nil, false, nil
	}
	return r, true, nil
}

// pointedAt returns the upstream a served name points at and the tool's name
// there, or nil.
func (p *Proxy) pointedAt(name string) (*Upstream, string) {
	if len(p.upstreams) == 1 && !p.cfg.Prefix {
		return p.upstreams[0], name
	}
	server, tool, found := strings.Cut(name, Separator)
	if !found {
		return nil, ""
	}
	for _, u := range p.upstreams {
		if u.Name() == server {
			return u, tool
		}
	}
	return nil, ""
}
