package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultTimeout bounds each proxied call when ProxyConfig.Timeout is 0.
const DefaultTimeout = 60 * time.Second

// Separator joins a server's name and its tool's name in federated tool
// names ("fs__read_file"); server names cannot contain it, so the first
// occurrence splits a federated name unambiguously.
const Separator = "__"

// ProxyConfig configures a [Proxy]. Every field documents its zero value.
type ProxyConfig struct {
	// Upstreams are the servers to front; at least one, with distinct names.
	// OnToolsChanged, if set, is still called.
	Upstreams []UpstreamConfig

	// Registry holds the tools' breakers and statistics, keyed "server/tool".
	// Share one with a dashboard or a gateway to show the proxy's breakers
	// there. nil: a new registry with Breaker.
	Registry *health.Registry
	// Breaker configures every tool's breaker when Registry is nil (its Name is
	// ignored). The zero value uses the breaker defaults. Breaker.Now is also
	// the clock a probe's lease is measured on: with a Registry whose clock is
	// not time.Now, set Breaker.Now to that clock.
	Breaker breaker.Settings

	// Timeout bounds each call; a call cut by it is a failure. 0:
	// DefaultTimeout (60s).
	Timeout time.Duration
	// Tools overrides Timeout and isError counting per tool, keyed by breaker
	// key "server/tool". nil: none.
	Tools map[string]ToolOptions
	// CountToolErrors makes isError results failures for every tool (see
	// [ToolOptions.CountToolErrors]). false: only for tools whose Tools entry
	// says so.
	CountToolErrors bool
	// Backups maps a served tool name to other served tools that can do its
	// job; refusals name them (with whether they are available now). Tools of
	// the same name on other servers are always named. nil: none.
	Backups map[string][]string

	// Prefix serves every tool as "server__tool" even with one upstream. With
	// several upstreams names are always prefixed. false with one upstream:
	// its tools are served under their own names.
	Prefix bool

	// OnCall, if set, is called after every call (refusals included), before
	// its result is answered, on the goroutine that made the call (for a
	// 2026-07-28 client, the call's own: see multiround.go) with no lock
	// held. nil: none.
	OnCall func(CallInfo)
	// Logger logs one line per call (Info; Warn for failures, timeouts and
	// refusals) and the upstreams' connection events. nil: no logging.
	Logger *slog.Logger
}

// CallInfo describes one call through a [Proxy].
type CallInfo struct {
	Name     string        // the tool name the client called
	Server   string        // the upstream's name
	Tool     string        // the tool's name on the upstream
	Breaker  string        // the breaker key, "server/tool"
	Outcome  Outcome       // how it ended
	Probe    bool          // the call was its breaker's probe
	Duration time.Duration // from the gate to the verdict
	Err      error         // the error behind a failure, timeout, refusal or cancel
}

// proxyTool is one served tool.
type proxyTool struct {
	name string // served name
	up   *Upstream
	tool string // name on the upstream
	key  string // breaker key
	wire []byte // the served definition as JSON, to skip unchanged re-adds
}

// Proxy is an MCP server that fronts upstream MCP servers, one breaker per
// tool. A call the breaker refuses, and a call that fails (the server is down,
// died mid-call, timed out, broke the protocol), is answered with a tool
// result whose isError is set, whose text tells the model what happened, when
// to retry and which other tool can serve, and whose _meta["loopctl/call"]
// says the same for programs (see [CallMeta]). Results of upstream calls are
// passed through unchanged, isError included. A call of a tool the proxy
// does not serve goes to the server its name points at, whose answer (an
// isError result or a JSON-RPC error) is relayed as it is; a name pointing at
// no server is a JSON-RPC error.
//
// Serve [Proxy.Server] over any MCP transport: mcp.StdioTransport, or
// mcp.NewStreamableHTTPHandler for HTTP. A Proxy is safe for concurrent use.
type Proxy struct {
	cfg       ProxyConfig
	reg       *health.Registry
	server    *mcp.Server
	upstreams []*Upstream
	log       *slog.Logger

	mu    sync.Mutex
	tools map[string]*proxyTool // by served name
	pass  passState             // prompts, resources, subscriptions, logging

	callers callers      // the clients with tool calls in flight, per upstream
	pending pendingCalls // new-protocol calls waiting for their client's next round
	wg      sync.WaitGroup
	closing chan struct{} // closed by Close: background calls end
	close   sync.Once
	bgMu    sync.Mutex // orders a background call's start before Close's wait
}

// NewProxy checks cfg and builds a Proxy whose upstreams are not connected
// yet; call [Proxy.Start].
func NewProxy(cfg ProxyConfig) (*Proxy, error) {
	if err := validateProxy(cfg); err != nil {
		return nil, err
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	p := &Proxy{cfg: cfg, reg: cfg.Registry, log: cfg.Logger, tools: make(map[string]*proxyTool), closing: make(chan struct{}),
		pass: passState{prompts: map[string]*passItem{}, resources: map[string]*passItem{},
			templates: map[string]*passItem{}, subs: map[string]int{}}}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.reg == nil {
		reg, err := health.NewRegistry(cfg.Breaker)
		if err != nil {
			return nil, fmt.Errorf("mcptool: ProxyConfig.Breaker: %w", err)
		}
		p.reg = reg
	}
	p.server = p.newServer()
	if err := p.addUpstreams(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// validateProxy checks what NewProxy checks before building anything: at
// least one upstream, and no negative timeout.
func validateProxy(cfg ProxyConfig) error {
	if len(cfg.Upstreams) == 0 {
		return errors.New("mcptool: ProxyConfig.Upstreams: at least one upstream is required")
	}
	if cfg.Timeout < 0 {
		return fmt.Errorf("mcptool: ProxyConfig.Timeout must not be negative (got %v)", cfg.Timeout)
	}
	for k, o := range cfg.Tools {
		if o.Timeout < 0 {
			return fmt.Errorf("mcptool: ProxyConfig.Tools[%q].Timeout must not be negative (got %v)", k, o.Timeout)
		}
	}
	return nil
}

// newServer builds the proxy's MCP server: it serves tools (with list
// changes) and completion and subscriptions through p; the rest of its
// capabilities are the upstreams' (see middleware).
func (p *Proxy) newServer() *mcp.Server {
	server := mcp.NewServer(&mcp.Implementation{Name: "loopctl-mcp-proxy", Version: "1"}, &mcp.ServerOptions{
		Logger:       sdkLogger(p.cfg.Logger),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		// The rest of the capabilities are the upstreams' (see middleware).
		CompletionHandler: p.complete,
		SubscribeHandler: func(ctx context.Context, req *mcp.SubscribeRequest) error {
			return p.subscribe(ctx, req.Params.URI, true)
		},
		UnsubscribeHandler: func(ctx context.Context, req *mcp.UnsubscribeRequest) error {
			return p.subscribe(ctx, req.Params.URI, false)
		},
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { p.rootsChanged() },
	})
	server.AddReceivingMiddleware(p.middleware)
	return server
}

// addUpstreams builds an Upstream for each of cfg.Upstreams (names must be
// distinct), with the proxy's logger by default, its hooks, and its tool
// list synced into p before the user's OnToolsChanged is called.
func (p *Proxy) addUpstreams(cfg ProxyConfig) error {
	seen := make(map[string]bool)
	for i, uc := range cfg.Upstreams {
		if seen[uc.Name] {
			return fmt.Errorf("mcptool: ProxyConfig.Upstreams[%d]: duplicate name %q", i, uc.Name)
		}
		seen[uc.Name] = true
		user := uc.OnToolsChanged
		uc.OnToolsChanged = nil // set below, once u exists
		if uc.Logger == nil {
			uc.Logger = cfg.Logger
		}
		uc, err := uc.withDefaults()
		if err != nil {
			return fmt.Errorf("mcptool: ProxyConfig.Upstreams[%d]: %w", i, err)
		}
		u := newUpstream(uc, p)
		u.hooks = p.hooksFor(u)
		u.cfg.OnToolsChanged = func(tools []*mcp.Tool) {
			p.sync(u, tools)
			if user != nil {
				user(tools)
			}
		}
		p.upstreams = append(p.upstreams, u)
	}
	return nil
}

// Server returns the MCP server to serve, e.g. with
// p.Server().Run(ctx, &mcp.StdioTransport{}).
func (p *Proxy) Server() *mcp.Server { return p.server }

// Registry returns the registry of the tools' breakers, keyed "server/tool".
func (p *Proxy) Registry() *health.Registry { return p.reg }

// Upstreams returns the fronted servers, in configuration order.
func (p *Proxy) Upstreams() []*Upstream { return slices.Clone(p.upstreams) }

// Start connects every upstream in the background and waits until each has
// made its first attempt or ctx is done (whichever comes first). An upstream
// that cannot be reached does not fail Start: it keeps being retried, and
// its tools appear when it comes up.
func (p *Proxy) Start(ctx context.Context) {
	for _, u := range p.upstreams {
		u.Start(context.WithoutCancel(ctx))
	}
	for _, u := range p.upstreams {
		u.WaitFirst(ctx)
	}
}

// Close ends the calls still running for clients that went away, closes
// every upstream (ending their processes) and waits for them.
func (p *Proxy) Close() error {
	p.bgMu.Lock() // no background call starts from now on
	p.close.Do(func() { close(p.closing) })
	p.bgMu.Unlock()
	p.wg.Wait()
	var errs []error
	for _, u := range p.upstreams {
		errs = append(errs, u.Close())
	}
	return errors.Join(errs...)
}

// servedName returns the name a client sees for server's tool.
func (p *Proxy) servedName(server, tool string) string {
	if p.cfg.Prefix || len(p.upstreams) > 1 {
		return server + Separator + tool
	}
	return tool
}

// sync makes the served tools of u match its new list: removed tools are
// removed, new or changed ones (re)added, which notifies clients.
func (p *Proxy) sync(u *Upstream, tools []*mcp.Tool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	keep := make(map[string]bool, len(tools))
	for _, t := range tools {
		name := p.servedName(u.Name(), t.Name)
		keep[name] = true
		served := *t
		served.Name = name
		wire, err := json.Marshal(&served)
		if err != nil {
			p.log.Warn("mcp tool skipped", "server", u.Name(), "tool", t.Name, "err", err)
			continue
		}
		if old := p.tools[name]; old != nil && string(old.wire) == string(wire) {
			continue
		}
		pt := &proxyTool{name: name, up: u, tool: t.Name, key: u.Name() + "/" + t.Name, wire: wire}
		if err := p.addTool(&served, pt); err != nil {
			p.log.Warn("mcp tool skipped", "server", u.Name(), "tool", t.Name, "err", err)
			delete(keep, name)
			continue
		}
		p.tools[name] = pt
	}
	var gone []string
	for name, pt := range p.tools {
		if pt.up == u && !keep[name] {
			gone = append(gone, name)
			delete(p.tools, name)
		}
	}
	if len(gone) > 0 {
		p.server.RemoveTools(gone...)
	}
}

// addTool adds one served tool, turning the SDK's panic on an invalid
// definition into an error.
func (p *Proxy) addTool(t *mcp.Tool, pt *proxyTool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid tool definition: %v", r)
		}
	}()
	p.server.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var relay func(*mcp.ProgressNotificationParams)
		if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
			ss := req.Session
			// Not cut with this request: a new-protocol call goes on past
			// the round that started it (see multiround.go).
			nctx := context.WithoutCancel(ctx)
			relay = func(n *mcp.ProgressNotificationParams) { // the client's own token, the server's progress
				ss.NotifyProgress(nctx, &mcp.ProgressNotificationParams{ProgressToken: token,
					Progress: n.Progress, Total: n.Total, Message: n.Message})
			}
		}
		if req.Session != nil && multiRound(req.Session) {
			return p.callMultiRound(ctx, pt, req, relay), nil
		}
		defer p.callers.enter(pt.up, caller{ss: req.Session})()
		res, _ := p.call(ctx, pt, req.Params.Arguments, relay)
		return res, nil
	})
	return nil
}

// Call calls the served tool name with args through its breaker, as a client's
// tools/call would, and returns the result the client would get and what
// happened. An unknown name is an error.
func (p *Proxy) Call(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, CallInfo, error) {
	p.mu.Lock()
	pt := p.tools[name]
	p.mu.Unlock()
	if pt == nil {
		return nil, CallInfo{Name: name}, fmt.Errorf("mcptool: unknown tool %q", name)
	}
	res, info := p.call(ctx, pt, args, nil)
	return res, info, nil
}

// toolOptions returns the options of the tool with breaker key key.
func (p *Proxy) toolOptions(key string) ToolOptions {
	o := p.cfg.Tools[key]
	o.CountToolErrors = o.CountToolErrors || p.cfg.CountToolErrors
	if o.Timeout == 0 {
		o.Timeout = p.cfg.Timeout
	}
	return o
}

// alternatives returns the other served tools that can do pt's job, in order:
// configured backups, then tools of the same name on other servers.
func (p *Proxy) alternatives(pt *proxyTool) []string {
	alts := slices.Clone(p.cfg.Backups[pt.name])
	p.mu.Lock()
	for name, other := range p.tools {
		if other != pt && other.tool == pt.tool && !slices.Contains(alts, name) {
			alts = append(alts, name)
		}
	}
	p.mu.Unlock()
	slices.Sort(alts[len(p.cfg.Backups[pt.name]):])
	return alts
}

// servedKey returns the breaker key of a served tool name ("" if unknown).
func (p *Proxy) servedKey(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pt := p.tools[name]; pt != nil {
		return pt.key
	}
	return ""
}

// describe names a tool for texts: 'echo' on server 'everything'.
func describe(pt *proxyTool) string {
	return fmt.Sprintf("'%s' (server '%s')", pt.name, pt.up.Name())
}
