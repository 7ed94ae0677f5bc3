package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Outcome is how one tool call ended; its string is the outcome label of the
// loopctl_mcp_calls_total metric.
type Outcome string

// The outcomes of a call.
const (
	// OutcomeSuccess: the tool answered. A success for the breaker.
	OutcomeSuccess Outcome = "success"
	// OutcomeToolError: the tool answered with isError set. Passed through; a
	// success for the breaker unless [ToolOptions.CountToolErrors].
	OutcomeToolError Outcome = "tool_error"
	// OutcomeInvalidArguments: the server rejected the arguments (JSON-RPC
	// invalid params). The caller's mistake: no verdict.
	OutcomeInvalidArguments Outcome = "invalid_arguments"
	// OutcomeFailure: a transport failure, a protocol error, or a server that
	// died during the call. A failure for the breaker.
	OutcomeFailure Outcome = "failure"
	// OutcomeServerDown: the server was down (crashed, restarting) when the
	// call came, so it was not sent. No verdict: the tool was not tried.
	OutcomeServerDown Outcome = "server_down"
	// OutcomeTimeout: the call's deadline (its timeout, the probe's lease or the
	// caller's deadline) passed. A timeout for the breaker (SEMANTICS §1, rev
	// 3): a failure dated at the call's start (a probe's at its lease end).
	OutcomeTimeout Outcome = "timeout"
	// OutcomeCancel: the caller cancelled. No verdict.
	OutcomeCancel Outcome = "cancel"
	// OutcomeRefused: the tool's breaker refused the call; the server was not called.
	OutcomeRefused Outcome = "refused"
	// OutcomeRejected: the server refused the request's protocol version (an
	// HTTP 400 about the version, or JSON-RPC error -32022): the hop's versions
	// disagree, which says nothing of the tool. No verdict.
	OutcomeRejected Outcome = "rejected"
)

// ToolOptions configures the calls of one tool.
type ToolOptions struct {
	// Timeout bounds each call. 0: the default of the Proxy or agent tool set.
	Timeout time.Duration
	// CountToolErrors makes a result with isError set a failure for the
	// breaker, for a tool whose errors mean its backend is down rather than that
	// its arguments were bad. false: such a result counts as a success.
	CountToolErrors bool
}

// verdict is what a call means to its breaker.
type verdict int

const (
	verdictNone verdict = iota
	verdictSuccess
	verdictFailure
	verdictTimeout // a failure dated at the call's start
)

// classify judges a finished call. caller is the context the caller gave
// (whose cancellation is a cancel), call the call's own context: an error
// matching context.DeadlineExceeded, or any error once call's deadline has
// passed, is a timeout.
func classify(caller, call context.Context, res *mcp.CallToolResult, err error, opts ToolOptions) (Outcome, verdict) {
	switch {
	case err == nil && res != nil && res.IsError:
		if opts.CountToolErrors {
			return OutcomeToolError, verdictFailure
		}
		return OutcomeToolError, verdictSuccess
	case err == nil:
		return OutcomeSuccess, verdictSuccess
	case errors.Is(caller.Err(), context.Canceled):
		return OutcomeCancel, verdictNone
	case errors.Is(err, ErrDown) || errors.Is(err, ErrLoginRequired):
		// A server that wants a login is unusable until a person logs in:
		// nothing was learnt of the tool.
		return OutcomeServerDown, verdictNone
	case isProtocolRejection(err):
		return OutcomeRejected, verdictNone
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(call.Err(), context.DeadlineExceeded):
		return OutcomeTimeout, verdictTimeout
	case isInvalidParams(err):
		return OutcomeInvalidArguments, verdictNone
	default:
		return OutcomeFailure, verdictFailure
	}
}

// isInvalidParams reports a JSON-RPC invalid-params error from the server.
func isInvalidParams(err error) bool {
	var werr *jsonrpc.Error
	return errors.As(err, &werr) && werr.Code == jsonrpc.CodeInvalidParams
}

// ResultText renders a tool result as the text a model reads: its text
// contents joined by newlines; other contents as short descriptions; the
// structured content as JSON if there is no text.
func ResultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", c.Resource.URI))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	return strings.Join(parts, "\n")
}
