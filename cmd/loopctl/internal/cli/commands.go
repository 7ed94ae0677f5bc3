package cli

// commands is the command table, in the order the usage lists them. Adding a command
// is one entry here plus its run function.
var commands = []Command{
	{Name: "admin", Summary: "show, hold, release, reset, disable or enable a running gateway's model breakers", Run: runAdmin},
	{Name: "demo", Summary: "watch the breakers trip and recover on a scripted in-process model server", Run: runDemo},
	{Name: "healthcheck", Summary: "exit 0 when a running gateway's /readyz answers 200, 1 otherwise (for a container's HEALTHCHECK)", Run: runHealthcheck},
	{Name: "mcp-proxy", Summary: "serve MCP servers' tools with a circuit breaker per tool (stdio or streamable HTTP)", Run: runMCPProxy},
	{Name: "serve", Summary: "run the OpenAI-compatible gateway (model breaker, fallback chain, retry ladder)", Run: runServe},
	{Name: "simulate", Summary: "measure plain retries against a breaker during a simulated outage", Run: runSimulate},
	{Name: "version", Summary: "print the version, the commit and the Go version of this build", Run: runVersion},
}
