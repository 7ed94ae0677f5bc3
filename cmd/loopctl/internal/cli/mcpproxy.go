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
unchanged, and the proxy declares every capability its upstreams declare. What an
upstream asks of its host (sampling, elicitation, roots) goes to the proxy's client.

Every call has a deadline (--timeout; a probe also ends with its lease). Transport
failures, timeouts, protocol errors and a server that dies mid-call count against the
tool's breaker; a call while the server is down is answered at once, with no verdict;
a result with isError is passed through and counts only with --count-tool-errors (or
"countToolErrors" per tool in --config). A refused or failed call is answered with an
isError result that says what happened, when to retry and which other tool can serve,
with the same facts under _meta["loopctl/call"]. A crashed command is restarted with
backoff; meanwhile its tools stay listed and calls are refused. Non-JSON lines on a
server's stdout (banners) are skipped with a log record.

An HTTP upstream of --config with an "oauth" object is authorized with the token
that ` + "`loopctl mcp-proxy login SERVER`" + ` stored (refreshed when it expires); without
one its tools are unavailable and say to run that command.

Serves MCP on stdin/stdout (logs go to stderr), or with --listen ADDR streamable HTTP
at http://ADDR/mcp, with Prometheus metrics at /metrics, the breakers at /dashboard/ and
the upstream servers' connections at /upstreams.`

// proxyHooks lets tests see the running proxy.
var proxyHooks struct{ started func(*mcptool.Proxy) }

// runMCPProxy is `loopctl mcp-proxy` on the process's standard input,
// ended by SIGTERM as well as by ctx.
func runMCPProxy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// MCP clients stop their servers with SIGTERM: close the upstreams (and
	// end their processes) on it too.
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM)
	defer stop()
	return serveMCPProxy(ctx, args, os.Stdin, stdout, stderr)
}

// serveMCPProxy is mcp-proxy with its standard input given.
func serveMCPProxy(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if rest, ok := loginArgs(args); ok {
		return mcpProxyLogin(ctx, rest, stdout, stderr)
	}
	var command []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, command = args[:i], args[i+1:]
	}
	fs := NewFlagSet("mcp-proxy")
	f := defineMCPProxyFlags(fs)
	if code, done := ParseFlags(fs, mcpProxyUsage, args, stdout, stderr); done {
		return code
	}
	usage := func(msg string) int { return UsageError(stderr, fs.Name(), msg) }
	s, err := f.settings(fs, command)
	if err != nil {
		return usage(err.Error())
	}
	logger := newProxyLogger(*f.logFormat, stderr)
	metrics := newProxyMetrics()
	board := dashboard.NewLog(100)
	reg, err := newProxyRegistry(s, metrics, board, logger)
	if err != nil {
		return usage(err.Error())
	}
	metrics.watch(reg)
	cfg, err := proxyConfig(s, reg, metrics, logger, stderr)
	if err != nil {
		return usage(err.Error())
	}
	p, err := mcptool.NewProxy(cfg)
	if err != nil {
		return usage(strings.TrimPrefix(err.Error(), "mcptool: "))
	}
	defer p.Close()
	p.Start(ctx)
	if proxyHooks.started != nil {
		proxyHooks.started(p)
	}
	logUpstreams(p, logger)
	if s.listen != "" {
		return serveProxyHTTP(ctx, p, metrics, board, s.listen, stdout, stderr, logger)
	}
	return serveProxyStdio(ctx, p, stdin, stdout, logger)
}

// mcpProxyFlags holds the values of mcp-proxy's flags once parsed.
type mcpProxyFlags struct {
	stdios, https                        multiFlag
	config, name, listen, logFormat      *string
	timeout, cooldown, probe, restartMax *time.Duration
	threshold                            *int
	prefix, countErrs                    *bool
}

// defineMCPProxyFlags declares mcp-proxy's flags on fs.
func defineMCPProxyFlags(fs *flag.FlagSet) *mcpProxyFlags {
	f := &mcpProxyFlags{}
	fs.Var(&f.stdios, "stdio", "upstream `NAME='COMMAND ARG...'` over stdio (repeatable; arguments split on spaces)")
	fs.Var(&f.https, "http", "upstream `NAME=URL` over streamable HTTP (repeatable)")
	f.config = fs.String("config", "", "JSON config `FILE` with \"mcpServers\" and proxy settings")
	f.name = fs.String("name", "", "name of the upstream given after -- (default: derived from the command)")
	f.listen = fs.String("listen", "", "serve streamable HTTP on `ADDR` (loopback) instead of stdio")
	f.timeout = fs.Duration("timeout", mcptool.DefaultTimeout, "deadline of each call")
	f.threshold = fs.Int("failure-threshold", 3, "consecutive failures that trip a tool's breaker")
	f.cooldown = fs.Duration("cooldown", 30*time.Second, "how long a tripped breaker refuses before a probe")
	f.probe = fs.Duration("probe-timeout", 30*time.Second, "lease of a probe: its call is cut when it ends")
	f.restartMax = fs.Duration("restart-max", mcptool.DefaultRestartMax, "longest wait between restarts of a dead upstream")
	f.prefix = fs.Bool("prefix", false, "serve tools as SERVER__TOOL even with one upstream")
	f.countErrs = fs.Bool("count-tool-errors", false, "count isError results as failures, for every tool")
	f.logFormat = fs.String("log-format", "text", "log format on stderr: text or json")
	return f
}

// settings composes what the proxy runs with: the flags, the --config file
// under the flags given on the command line, the upstreams of --stdio, --http
// and the command after --; then checks them. Its errors are usage errors.
func (f *mcpProxyFlags) settings(fs *flag.FlagSet, command []string) (proxySettings, error) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	s := proxySettings{timeout: *f.timeout, failureThreshold: *f.threshold, cooldown: *f.cooldown, probeTimeout: *f.probe,
		restartMax: *f.restartMax, prefix: *f.prefix, countToolErrors: *f.countErrs, listen: *f.listen}
	if *f.config != "" {
		var err error
		if s, err = mergeProxyFile(*f.config, s, set); err != nil {
			return s, err
		}
	}
	if err := f.addUpstreams(&s, command); err != nil {
		return s, err
	}
	return s, checkProxySettings(s, *f.logFormat)
}

// mergeProxyFile returns s with the config file name read over it, except
// for the settings whose flags were given on the command line (set): those
// win over the file.
func mergeProxyFile(name string, s proxySettings, set map[string]bool) (proxySettings, error) {
	fileSettings := s
	if err := loadProxyFile(name, &fileSettings); err != nil {
		return s, err
	}
	for flagName, apply := range map[string]func(){
		"timeout": func() { fileSettings.timeout = s.timeout }, "failure-threshold": func() { fileSettings.failureThreshold = s.failureThreshold },
		"cooldown": func() { fileSettings.cooldown = s.cooldown }, "probe-timeout": func() { fileSettings.probeTimeout = s.probeTimeout },
		"restart-max": func() { fileSettings.restartMax = s.restartMax }, "listen": func() { fileSettings.listen = s.listen },
	} {
		if set[flagName] {
			apply()
		}
	}
	return fileSettings, nil
}

// addUpstreams appends to s the upstreams of --stdio, --http and the
// command after -- (named by --name, or after the command).
func (f *mcpProxyFlags) addUpstreams(s *proxySettings, command []string) error {
	for _, v := range f.stdios {
		spec, err := parseUpstreamFlag("stdio", v)
		if err != nil {
			return err
		}
		s.servers = append(s.servers, spec)
	}
	for _, v := range f.https {
		spec, err := parseUpstreamFlag("http", v)
		if err != nil {
			return err
		}
		s.servers = append(s.servers, spec)
	}
	if len(command) > 0 {
		n := *f.name
		if n == "" {
			n = commandName(command)
		}
		s.servers = append(s.servers, serverSpec{name: n, command: command})
	} else if *f.name != "" {
		return errors.New("--name names the upstream given after --, and there is none")
	}
	return nil
}

// checkProxySettings refuses settings the proxy cannot run with: timings
// that are not positive, an unknown log format, duplicate or missing
// upstreams, a --listen address other than loopback.
func checkProxySettings(s proxySettings, logFormat string) error {
	switch {
	case s.timeout <= 0:
		return fmt.Errorf("--timeout must be positive (got %v)", s.timeout)
	case s.failureThreshold <= 0:
		return fmt.Errorf("--failure-threshold must be positive (got %d)", s.failureThreshold)
	case s.cooldown <= 0 || s.probeTimeout <= 0:
		return errors.New("--cooldown and --probe-timeout must be positive")
	case logFormat != "text" && logFormat != "json":
		return fmt.Errorf("--log-format %q: want text or json", logFormat)
	}
	if err := checkServers(s.servers); err != nil {
		return err
	}
	if s.listen != "" {
		return loopbackOnly(s.listen)
	}
	return nil
}

// newProxyLogger returns the proxy's logger on stderr, in format text or json.
func newProxyLogger(format string, stderr io.Writer) *slog.Logger {
	var handler slog.Handler = slog.NewTextHandler(stderr, nil)
	if format == "json" {
		handler = slog.NewJSONHandler(stderr, nil)
	}
	return slog.New(handler)
}

// newProxyRegistry returns the tools' breakers, whose transitions reach the
// metrics, the dashboard and the log.
func newProxyRegistry(s proxySettings, metrics *proxyMetrics, board *dashboard.Log, logger *slog.Logger) (*health.Registry, error) {
	return health.NewRegistry(breaker.Settings{
		FailureThreshold: s.failureThreshold, RecoveryDuration: s.cooldown, ProbeTimeout: s.probeTimeout,
		FailureRate: s.rate.FailureRate, RateWindow: s.rate.RateWindow, RateMinCalls: s.rate.RateMinCalls,
		SlowCallAfter: s.rate.SlowCallAfter, SlowCallRate: s.rate.SlowCallRate,
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
}

// proxyConfig composes the mcptool.ProxyConfig of settings s: the registry,
// one upstream per server, the calls counted in the metrics.
func proxyConfig(s proxySettings, reg *health.Registry, metrics *proxyMetrics, logger *slog.Logger, stderr io.Writer) (mcptool.ProxyConfig, error) {
	cfg := mcptool.ProxyConfig{Registry: reg, Timeout: s.timeout, Tools: s.tools, Backups: s.backups,
		Prefix: s.prefix, Logger: logger}
	for _, spec := range s.servers {
		uc, err := upstreamConfig(spec, s, logger, stderr)
		if err != nil {
			return cfg, err
		}
		cfg.Upstreams = append(cfg.Upstreams, uc)
	}
	cfg.OnCall = func(ci mcptool.CallInfo) {
		metrics.call(ci, s.countToolErrors || s.tools[ci.Breaker].CountToolErrors)
	}
	cfg.CountToolErrors = s.countToolErrors
	return cfg, nil
}

// upstreamConfig is the mcptool.UpstreamConfig of one server: streamable
// HTTP to its URL (authorized with its stored token when it has "oauth"), or
// its command over stdio (its stderr on ours). A token file that cannot be
// used is an error.
func upstreamConfig(spec serverSpec, s proxySettings, logger *slog.Logger, stderr io.Writer) (mcptool.UpstreamConfig, error) {
	uc := mcptool.UpstreamConfig{Name: spec.name, RestartBase: s.restartBase, RestartMax: s.restartMax}
	if spec.url != "" && spec.oauth != nil {
		opts := spec.oauth.options(spec.name, "", nil)
		opts.Logger = logger
		h, err := mcptool.NewOAuthHandler(opts)
		if err != nil {
			return uc, fmt.Errorf("mcpServers.%s.oauth: %s", spec.name, strings.TrimPrefix(err.Error(), "mcptool: "))
		}
		uc.Connect = mcptool.StreamableHTTPAuth(spec.url, nil, h)
		return uc, nil
	}
	if spec.url != "" {
		uc.Connect = mcptool.StreamableHTTP(spec.url, nil)
		return uc, nil
	}
	var env []string
	if len(spec.env) > 0 {
		env = append(os.Environ(), spec.env...)
	}
	uc.Connect = mcptool.Command(mcptool.CommandOptions{Stderr: stderr, Env: env, Dir: spec.dir, Logger: logger.With("server", spec.name)},
		spec.command[0], spec.command[1:]...)
	return uc, nil
}

// logUpstreams logs each upstream as ready, or as not reachable yet.
func logUpstreams(p *mcptool.Proxy, logger *slog.Logger) {
	for _, u := range p.Upstreams() {
		st := u.Status()
		if st.Up {
			logger.Info("mcp upstream ready", "server", u.Name(), "tools", len(u.Tools()))
		} else {
			logger.Warn("mcp upstream not reachable yet; retrying in the background", "server", u.Name(), "err", st.Err)
		}
	}
}

// serveProxyStdio serves MCP on stdin and stdout until the client goes away
// or ctx ends.
func serveProxyStdio(ctx context.Context, p *mcptool.Proxy, stdin io.Reader, stdout io.Writer, logger *slog.Logger) int {
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
