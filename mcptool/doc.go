// Package mcptool puts MCP (Model Context Protocol) servers' tools behind
// loopctl's tool breakers.
//
// An [Upstream] keeps one MCP server connected: it launches a command (the
// stdio transport, [Command]) or connects to a URL (streamable HTTP,
// [StreamableHTTP]), follows notifications/tools/list_changed, and restarts a
// server that died with exponential backoff, keeping its last tool list while
// it is down. A server behind OAuth is reached with [StreamableHTTPAuth] and
// the handler of [NewOAuthHandler]: its token kept in a file of mode 0600 and
// refreshed; without one the server is down with a [*LoginRequiredError], a
// call of its tools carrying no verdict.
//
// [AgentTools] turns an Upstream's tools into [agent.Tool]s, each behind its
// own breaker in the agent's registry. A [Proxy] is an MCP server (an
// *mcp.Server from the official Go SDK, servable over stdio or streamable HTTP)
// that fronts one or more Upstreams with one breaker per tool; `loopctl
// mcp-proxy` is a Proxy. Besides tools, a Proxy passes prompts, resources,
// resource templates, resource subscriptions, completions and logging through
// (no breaker: they are forwarded with its Timeout), and declares every
// capability its upstreams declare. What an upstream asks of its host
// (sampling, elicitation, roots) is relayed to the proxy's client.
//
// What counts against a tool's breaker: transport failures, timeouts (every
// call has a deadline; a probe is also bounded by its lease), JSON-RPC errors
// other than invalid params, and a server that died during the call. A call
// that comes while the server is down is not sent and carries no verdict
// ([OutcomeServerDown]); nor does one the server refuses for its protocol
// version ([OutcomeRejected]): each hop negotiates its own. A tool result with
// isError set is the tool's answer, usually to bad arguments: it is passed
// through and counts as a success (the server answered), unless the tool is
// configured to count it ([ToolOptions.CountToolErrors]).
package mcptool
