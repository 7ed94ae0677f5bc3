package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/dashboard"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/mcptool"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const mcpProxyUsage = `usage: loopctl mcp-proxy [flags] [-- COMMAND [ARG...]]

An MCP server that fronts one or more upstream MCP servers and puts every tool behind
its own circuit breaker. In an MCP client's config, replace
  "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]
with
  "command": "loopctl", "args": ["mcp-proxy", "--", "npx", "-y", "@modelcontextprotocol/server-everything"]

Upstreams: the command after --, --stdio NAME='COMMAND ARG...' and --http NAME=URL
(both repeatable), and the "mcpServers" of --config (the format MCP clients use, plus
"timeout", "breaker", "tools", "backups", "restart", "prefix", "listen"). With one
upstream its tools keep their names; with several each is served as SERVER__TOOL.

Prompts, resources (templates, subscriptions), completions and logging pass through
unchanged, and the proxy declares every capability its upstreams declare.

Every call has a deadline (--timeout; a probe also ends with its lease). Transport
failures, timeouts, protocol errors and a server that dies mid-call count against the
tool's breaker; a call while the server is down is answered at once, with no verdict;
a result with isError is passed through and counts only with --count-tool-errors (or
"countToolErrors" per tool in --config). A refused or failed call is answered with an
isError result that says what happened, when to retry and which other tool can serve,
with the same facts under _meta["loopctl/call"]. A crashed command is restarted with
backoff; meanwhile its tools stay listed and calls are refused. Non-JSON lines on a
server's stdout (banners) are skipped with a log record.

Serves MCP on stdin/stdout (logs go to stderr), or with --listen ADDR streamable HTTP
at http://ADDR/mcp, with Prometheus metrics at /metrics, the breakers at /dashboard/ and
the upstream servers' connections at /upstreams.`

// proxyHooks lets tests see the running proxy.
var proxyHooks struct{ started func(*mcptool.Proxy) }

func runMCPProxy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// MCP clients stop their servers with SIGTERM: close the upstreams (and
	// end their processes) on it too.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	return serveMCPProxy(ctx, args, os.Stdin, stdout, stderr)
}

// serveMCPProxy is mcp-proxy with its standard input given.
func serveMCPProxy(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i+1:]
	}
	fs := NewFlagSet("mcp-proxy")
	var stdios, https multiFlag
	fs.Var(&stdios, "stdio", "upstream `NAME='COMMAND ARG...'` over stdio (repeatable; arguments split on spaces)")
	fs.Var(&https, "http", "upstream `NAME=URL` over streamable HTTP (repeatable)")
	config := fs.String("config", "", "JSON config `FILE` with \"mcpServers\" and proxy settings")
	name := fs.String("name", "", "name of the upstream given after -- (default: derived from the command)")
	listen := fs.String("listen", "", "serve streamable HTTP on `ADDR` (loopback) instead of stdio")
	timeout := fs.Duration("timeout", mcptool.DefaultTimeout, "deadline of each call")
	threshold := fs.Int("failure-threshold", 3, "consecutive failures that trip a tool's breaker")
	cooldown := fs.Duration("cooldown", 30*time.Second, "how long a tripped breaker refuses before a probe")
	probe := fs.Duration("probe-timeout", 30*time.Second, "lease of a probe: its call is cut when it ends")
	restartMax := fs.Duration("restart-max", mcptool.DefaultRestartMax, "longest wait between restarts of a dead upstream")
	prefix := fs.Bool("prefix", false, "serve tools as SERVER__TOOL even with one upstream")
	countErrs := fs.Bool("count-tool-errors", false, "count isError results as failures, for every tool")
	logFormat := fs.String("log-format", "text", "log format on stderr: text or json")
	if code, done := ParseFlags(fs, mcpProxyUsage, args, stdout, stderr); done {
		return code
	}
	usage := func(msg string) int { return UsageError(stderr, fs.Name(), msg) }
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	s := proxySettings{timeout: *timeout, failureThreshold: *threshold, cooldown: *cooldown, probeTimeout: *probe,
		restartMax: *restartMax, prefix: *prefix, countToolErrors: *countErrs, listen: *listen}
	if *config != "" {
		fileSettings := s
		if err := loadProxyFile(*config, &fileSettings); err != nil {
			return usage(err.Error())
		}
		// Flags given on the command line win over the file.
		for flagName, apply := range map[string]func(){
			"timeout": func() { fileSettings.timeout = s.timeout }, "failure-threshold": func() { fileSettings.failureThreshold = s.failureThreshold },
			"cooldown": func() { fileSettings.cooldown = s.cooldown }, "probe-timeout": func() { fileSettings.probeTimeout = s.probeTimeout },
			"restart-max": func() { fileSettings.restartMax = s.restartMax }, "listen": func() { fileSettings.listen = s.listen },
		} {
			if set[flagName] {
				apply()
			}
		}
		s = fileSettings
	}
	for _, v := range stdios {
		spec, err := parseUpstreamFlag("stdio", v)
		if err != nil {
			return usage(err.Error())
		}
		s.servers = append(s.servers, spec)
	}
	for _, v := range https {
		spec, err := parseUpstreamFlag("http", v)
		if err != nil {
			return usage(err.Error())
		}
		s.servers = append(s.servers, spec)
	}
	if len(command) > 0 {
		n := *name
		if n == "" {
			n = commandName(command)
		}
		s.servers = append(s.servers, serverSpec{name: n, command: command})
	} else if *name != "" {
		return usage("--name names the upstream given after --, and there is none")
	}
	switch {
	case s.timeout <= 0:
		return usage(fmt.Sprintf("--timeout must be positive (got %v)", s.timeout))
	case s.failureThreshold <= 0:
		return usage(fmt.Sprintf("--failure-threshold must be positive (got %d)", s.failureThreshold))
	case s.cooldown <= 0 || s.probeTimeout <= 0:
		return usage("--cooldown and --probe-timeout must be positive")
	case *logFormat != "text" && *logFormat != "json":
		return usage(fmt.Sprintf("--log-format %q: want text or json", *logFormat))
	}
	if err := checkServers(s.servers); err != nil {
		return usage(err.Error())
	}
	if s.listen != "" {
		if err := loopbackOnly(s.listen); err != nil {
			return usage(err.Error())
		}
	}

	var handler slog.Handler = slog.NewTextHandler(stderr, nil)
	if *logFormat == "json" {
		handler = slog.NewJSONHandler(stderr, nil)
	}
	logger := slog.New(handler)

	metrics := newProxyMetrics()
	board := dashboard.NewLog(100)
	reg, err := health.NewRegistry(breaker.Settings{
		FailureThreshold: s.failureThreshold, RecoveryDuration: s.cooldown, ProbeTimeout: s.probeTimeout,
		OnStateChange: func(name string, from, to breaker.State) {
			metrics.breakers.ToolTransitions(name, from, to)
			board.ToolHook(name, from, to)
			level := slog.LevelInfo
			if to == breaker.Open {
				level = slog.LevelWarn
			}
			logger.Log(context.Background(), level, "breaker", "breaker", name, "kind", "tool", "from", from.String(), "to", to.String())
		},
	})
	if err != nil {
		return usage(err.Error())
	}
	metrics.watch(reg)
	cfg := mcptool.ProxyConfig{Registry: reg, Timeout: s.timeout, Tools: s.tools, Backups: s.backups,
		Prefix: s.prefix, Logger: logger}
	for _, spec := range s.servers {
		uc := mcptool.UpstreamConfig{Name: spec.name, RestartBase: s.restartBase, RestartMax: s.restartMax}
		if spec.url != "" {
			uc.Connect = mcptool.StreamableHTTP(spec.url, nil)
		} else {
			var env []string
			if len(spec.env) > 0 {
				env = append(os.Environ(), spec.env...)
			}
			uc.Connect = mcptool.Command(mcptool.CommandOptions{Stderr: stderr, Env: env, Dir: spec.dir, Logger: logger.With("server", spec.name)},
				spec.command[0], spec.command[1:]...)
		}
		cfg.Upstreams = append(cfg.Upstreams, uc)
	}
	cfg.OnCall = func(ci mcptool.CallInfo) {
		metrics.call(ci, s.countToolErrors || s.tools[ci.Breaker].CountToolErrors)
	}
	cfg.CountToolErrors = s.countToolErrors
	p, err := mcptool.NewProxy(cfg)
	if err != nil {
		return usage(strings.TrimPrefix(err.Error(), "mcptool: "))
	}
	defer p.Close()
	p.Start(ctx)
	if proxyHooks.started != nil {
		proxyHooks.started(p)
	}
	for _, u := range p.Upstreams() {
		st := u.Status()
		if st.Up {
			logger.Info("mcp upstream ready", "server", u.Name(), "tools", len(u.Tools()))
		} else {
			logger.Warn("mcp upstream not reachable yet; retrying in the background", "server", u.Name(), "err", st.Err)
		}
	}

	if s.listen != "" {
		return serveProxyHTTP(ctx, p, metrics, board, s.listen, stdout, stderr, logger)
	}
	t := &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}}
	if err := p.Server().Run(ctx, t); err != nil && ctx.Err() == nil && !isEOF(err) {
		logger.Error("mcp-proxy: stdio session ended", "err", err)
		return ExitFailure
	}
	return ExitOK
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// nopWriteCloser makes a Writer an io.WriteCloser whose Close does nothing.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// isEOF reports a session that ended because the client went away: it
// closed stdin, or its end of stdout (a notification relayed as it hung up).
func isEOF(err error) bool {
	return err == io.EOF || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "connection closed") ||
		strings.Contains(err.Error(), "closed pipe")
}
