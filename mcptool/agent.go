package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/agent"
)

// AgentOptions configures [AgentTools]. The zero value is ready to use.
type AgentOptions struct {
	// NoPrefix names each agent tool after its MCP tool alone. false: tools are
	// named "server__tool", so that tools of several servers never collide and
	// each has its own breaker.
	NoPrefix bool
	// Timeout bounds each call (agent.Tool.Timeout). 0: the agent's
	// Config.ToolTimeout, which then applies.
	Timeout time.Duration
	// Tools overrides Timeout and isError counting per tool, keyed by the MCP
	// tool's name on the server. nil: none.
	Tools map[string]ToolOptions
}

// AgentTools returns u's current tools (the last list it saw) as agent tools,
// for agent.Config.Tools. The agent puts each behind its own breaker in its
// registry, keyed by the tool's name "server__tool" (server and tool), and
// bounds each call by the tool's Timeout (from AgentOptions, else its
// ToolTimeout; a probe also by its lease); the call's context reaches the
// server, which receives notifications/cancelled when the call is cut. A tool
// is marked NotIdempotent (no probe fall-through to a backup) unless the server
// annotates it readOnlyHint or idempotentHint: MCP's defaults for both are false.
//
// How a call ends, as the agent sees it: a result is the text of its content
// (see [ResultText]). A result with isError set is returned as text starting
// with "tool 'x' returned an error: ", which the agent counts as a success (the
// server answered) unless [ToolOptions.CountToolErrors], which makes it an
// error. Arguments the server rejects as invalid params are an
// [*agent.ArgumentError] (no verdict). A server that is down, a transport or
// protocol failure and a timeout are errors: failures.
//
// The tools follow notifications/tools/list_changed for the tools they name:
// a call always uses the server's current session, and a tool the server no
// longer lists fails with an [*agent.ArgumentError] naming the tools it does
// list. Tools added later need a new agent.Config: call AgentTools again from
// [UpstreamConfig.OnToolsChanged].
func AgentTools(u *Upstream, opts AgentOptions) []agent.Tool {
	var out []agent.Tool
	for _, t := range u.Tools() {
		name := u.Name() + Separator + t.Name
		if opts.NoPrefix {
			name = t.Name
		}
		params, err := json.Marshal(t.InputSchema)
		if err != nil || t.InputSchema == nil {
			params = nil
		}
		to := opts.Tools[t.Name]
		if to.Timeout == 0 {
			to.Timeout = opts.Timeout
		}
		a := t.Annotations
		out = append(out, agent.Tool{
			Name:          name,
			Description:   t.Description,
			Parameters:    params,
			Func:          agentFunc(u, name, t.Name, to.CountToolErrors),
			Timeout:       to.Timeout,
			NotIdempotent: a == nil || !(a.ReadOnlyHint || a.IdempotentHint),
		})
	}
	return out
}

// agentFunc is the Func of the agent tool name, calling tool on u.
func agentFunc(u *Upstream, name, tool string, countToolErrors bool) func(context.Context, json.RawMessage) (string, error) {
	return func(ctx context.Context, args json.RawMessage) (string, error) {
		if u.Status().Up && u.Tool(tool) == nil {
			return "", &agent.ArgumentError{Tool: name, Err: fmt.Errorf("server %q no longer offers tool %q", u.Name(), tool)}
		}
		res, err := u.CallTool(ctx, tool, args)
		if err != nil {
			if isInvalidParams(err) {
				return "", &agent.ArgumentError{Tool: name, Err: err}
			}
			// down, or refusing this hop's protocol version: not the tool's fault
			if (errors.Is(err, ErrDown) || isProtocolRejection(err)) && ctx.Err() == nil {
				return "", &agent.UnavailableError{Tool: name, Err: err}
			}
			return "", err
		}
		text := ResultText(res)
		if res.IsError {
			if countToolErrors {
				return "", errors.New(text)
			}
			return fmt.Sprintf("tool '%s' returned an error: %s", name, text), nil
		}
		return text, nil
	}
}
