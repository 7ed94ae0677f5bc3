package mcptool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK hands a notification to its handler on a queue of its own but a
// response straight to the waiting call, so a server's last progress
// notification, written just before the result, could be handled after the
// call had returned and its token was gone. The proxy therefore takes the
// progress notifications of its own calls off the connection itself, in the
// order they were read: each is relayed before the message after it (the
// result among them) is read at all.

// progressTransport is a transport whose connections hand the progress
// notifications of u's calls to their callbacks as they are read.
type progressTransport struct {
	mcp.Transport
	u *Upstream
}

// Connect connects the inner transport and wraps its connection.
func (t progressTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &progressConn{Connection: c, u: t.u}, nil
}

// progressConn is a connection that relays the progress notifications of its
// upstream's calls in read order (see progressTransport).
type progressConn struct {
	mcp.Connection
	u *Upstream
}

// Read returns the next message that is not a progress notification of one
// of the upstream's calls; those are relayed on the way.
func (c *progressConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil || !c.relayed(msg) {
			return msg, err
		}
	}
}

// relayed reports whether msg was a progress notification of one of the
// upstream's calls, and relays it if so.
func (c *progressConn) relayed(msg jsonrpc.Message) bool { return c.u.relayProgress(msg) }

// relayProgress hands msg to its call's progress callback and reports true if
// it is a progress notification for a call still waiting; anything else is
// left to the SDK.
func (u *Upstream) relayProgress(msg jsonrpc.Message) bool {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.IsCall() || req.Method != "notifications/progress" {
		return false
	}
	var p mcp.ProgressNotificationParams
	if json.Unmarshal(req.Params, &p) != nil {
		return false
	}
	f, ok := u.progress.Load(fmt.Sprint(p.ProgressToken))
	if !ok {
		return false
	}
	f.(func(*mcp.ProgressNotificationParams))(&p)
	return true
}

// withProgress returns t with the progress of u's calls relayed as read. A
// streamable HTTP transport is given an HTTP client that reads its event
// streams that way (its connection must stay the SDK's own, which the SDK
// tells of the negotiated session); any other transport's connection is
// wrapped.
func (u *Upstream) withProgress(t mcp.Transport) mcp.Transport {
	if st, ok := t.(*mcp.StreamableClientTransport); ok {
		c := *st
		c.HTTPClient = sseRelayClient(st.HTTPClient, u)
		return &c
	}
	return progressTransport{Transport: t, u: u}
}
