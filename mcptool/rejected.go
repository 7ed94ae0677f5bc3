package mcptool

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server that refuses a request's protocol version (an HTTP 400 about the
// version, or JSON-RPC error -32022) has said nothing about the tool: the
// hop's versions disagree. Such a call is [OutcomeRejected], with no verdict,
// so it never trips a breaker; and it does not end the connection.

// maxRejectionBody bounds how much of a 400's body is read to tell whether it
// is about the protocol version.
const maxRejectionBody = 4 << 10

// isProtocolRejection reports whether err is a server's refusal of the
// request's protocol version.
func isProtocolRejection(err error) bool {
	if werr, ok := errors.AsType[*jsonrpc.Error](err); ok {
		if werr.Code == mcp.CodeUnsupportedProtocolVersion {
			return true
		}
		return strings.Contains(strings.ToLower(werr.Message), "protocol version")
	}
	return false
}

// asProtocolError rewrites a 400 about the protocol version as a JSON-RPC
// error response to req with code -32022 and the server's text. The SDK's
// client reads a 400 carrying a JSON-RPC error response as that request's
// failure, but anything else (the go-sdk's plain text, the TypeScript SDK's
// error with a null id) as the end of the connection. Any other response is
// returned as it is.
func asProtocolError(req *http.Request, resp *http.Response) *http.Response {
	if resp.StatusCode != http.StatusBadRequest || resp.Body == nil {
		return resp
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxRejectionBody))
	if err != nil || !strings.Contains(strings.ToLower(string(head)), "protocol version") {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
		return resp
	}
	resp.Body.Close()
	text := strings.TrimSpace(string(head))
	var wire struct {
		Error *struct{ Message string } `json:"error"`
	}
	if json.Unmarshal(head, &wire) == nil && wire.Error != nil && wire.Error.Message != "" {
		text = wire.Error.Message
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": requestID(req),
		"error": map[string]any{"code": mcp.CodeUnsupportedProtocolVersion, "message": text}})
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	resp.Header = resp.Header.Clone()
	resp.Header.Set("Content-Type", "application/json")
	resp.Header.Del("Content-Length")
	return resp
}

// requestID returns the JSON-RPC id of the request req posted (0 if it
// cannot be read again).
func requestID(req *http.Request) json.RawMessage {
	if req.GetBody != nil {
		if b, err := req.GetBody(); err == nil {
			defer b.Close()
			var m struct{ ID json.RawMessage }
			if data, err := io.ReadAll(io.LimitReader(b, 1<<20)); err == nil && json.Unmarshal(data, &m) == nil && len(m.ID) > 0 && string(m.ID) != "null" {
				return m.ID
			}
		}
	}
	return json.RawMessage("0")
}
