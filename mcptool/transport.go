package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawJSON carries arguments to the server exactly as they arrived.
type rawJSON = json.RawMessage

// CommandOptions configures [Command]. The zero value is ready to use.
type CommandOptions struct {
	// Stderr receives the process's standard error. nil: discarded.
	Stderr io.Writer
	// Env is the process's environment, as for exec.Cmd.Env. nil: this
	// process's environment.
	Env []string
	// Dir is the process's working directory. "": this process's.
	Dir string
	// TerminateAfter is how long closing the connection waits for the process
	// to exit after its stdin is closed before it is sent SIGTERM (then, after
	// as long again, SIGKILL). 0: 2s.
	TerminateAfter time.Duration
	// Logger receives a Warn record for each line the process writes to its
	// standard output that is not a JSON-RPC message (a banner, a stray
	// print): such lines are skipped, never fatal. nil: slog.Default().
	Logger *slog.Logger
}

// Command returns an [UpstreamConfig.Connect] that starts a new process
// running name with args for each connection and speaks MCP over its stdin
// and stdout (the stdio transport), as in `npx -y @modelcontextprotocol/server-everything`.
// A line of its stdout that does not start with '{' or '[' (a banner, before
// or after the handshake) is skipped with a log record.
func Command(opts CommandOptions, name string, args ...string) func(context.Context) (mcp.Transport, error) {
	if opts.TerminateAfter == 0 {
		opts.TerminateAfter = 2 * time.Second
	}
	return func(context.Context) (mcp.Transport, error) {
		if name == "" {
			return nil, errors.New("mcptool: Command: empty command name")
		}
		// Not exec.CommandContext: the process lives as long as the
		// connection, and closing the connection ends it gracefully.
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Dir = opts.Env, opts.Dir
		cmd.Stderr = opts.Stderr
		log := opts.Logger
		if log == nil {
			log = slog.Default()
		}
		return &commandTransport{cmd: cmd, terminate: opts.TerminateAfter, log: log}, nil
	}
}

// StreamableHTTP returns an [UpstreamConfig.Connect] that connects to the
// MCP server at url over the streamable HTTP transport. client nil means
// http.DefaultClient.
func StreamableHTTP(url string, client *http.Client) func(context.Context) (mcp.Transport, error) {
	return func(context.Context) (mcp.Transport, error) {
		return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client}, nil
	}
}
