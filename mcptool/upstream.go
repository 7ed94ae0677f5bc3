package mcptool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/internal/durtext"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults for the zero values of [UpstreamConfig].
const (
	// DefaultRestartBase is the first wait before reconnecting a dead server.
	DefaultRestartBase = 250 * time.Millisecond
	// DefaultRestartMax caps the wait between reconnection attempts.
	DefaultRestartMax = 30 * time.Second
	// DefaultConnectTimeout bounds one connection attempt (handshake and tool list).
	DefaultConnectTimeout = 30 * time.Second
)

// stableAfter is how long a connection must have lived for the next failure to
// start the backoff from RestartBase again.
const stableAfter = 10 * time.Second

// UpstreamConfig configures an [Upstream]. Every field documents its zero value.
type UpstreamConfig struct {
	// Name identifies the server in breaker keys ("name/tool"), federated tool
	// names ("name__tool"), logs and metrics. Required: ASCII letters, digits,
	// '-' and '_', not starting or ending with '_' and without "__".
	Name string

	// Connect returns a fresh transport for each connection attempt, for example
	// [Command] (a new process each time) or [StreamableHTTP]. Required.
	Connect func(ctx context.Context) (mcp.Transport, error)

	// RestartBase is the wait before the first reconnection after the server
	// died or could not be reached; each further failed attempt doubles it (with
	// ±20% jitter), up to RestartMax. 0: DefaultRestartBase (250ms).
	RestartBase time.Duration
	// RestartMax caps the wait between attempts. 0: DefaultRestartMax (30s).
	RestartMax time.Duration
	// ConnectTimeout bounds one attempt: the MCP handshake and the first tool
	// list. 0: DefaultConnectTimeout (30s).
	ConnectTimeout time.Duration

	// OnToolsChanged, if set, is called with the server's new tool list each
	// time a listing succeeds (after every connection and every
	// notifications/tools/list_changed). Calls are serialized and made with no
	// lock held. nil: none.
	OnToolsChanged func(tools []*mcp.Tool)

	// Logger receives connection events (up, down, restart). nil: none.
	Logger *slog.Logger
}

// validate checks c, naming the bad field.
func (c UpstreamConfig) validate() error {
	if err := validServerName(c.Name); err != nil {
		return err
	}
	if c.Connect == nil {
		return fmt.Errorf("mcptool: upstream %q: Connect is required", c.Name)
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"RestartBase", c.RestartBase}, {"RestartMax", c.RestartMax}, {"ConnectTimeout", c.ConnectTimeout}} {
		if f.d < 0 {
			return fmt.Errorf("mcptool: upstream %q: %s must not be negative (got %v)", c.Name, f.name, f.d)
		}
	}
	return nil
}

// validServerName reports why name cannot name an upstream, or nil.
func validServerName(name string) error {
	if name == "" {
		return errors.New("mcptool: upstream Name is required")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("mcptool: upstream Name %q: only ASCII letters, digits, '-' and '_' are allowed", name)
		}
	}
	if strings.Contains(name, "__") || strings.HasPrefix(name, "_") || strings.HasSuffix(name, "_") {
		return fmt.Errorf(`mcptool: upstream Name %q must not contain "__" nor start or end with '_'`, name)
	}
	return nil
}

// Upstream is one MCP server, kept connected: it connects when started,
// follows notifications/tools/list_changed, and when the connection ends
// (the process exited, the HTTP session was lost) reconnects with exponential
// backoff. While it is down it keeps the last tool list it saw, and
// [Upstream.CallTool] fails at once with a [*DownError].
//
// An Upstream is safe for concurrent use. Its one background goroutine runs
// from [Upstream.Start] until [Upstream.Close] returns.
type Upstream struct {
	cfg    UpstreamConfig
	client *mcp.Client

	refresh   chan struct{} // a tools/list_changed arrived
	relist    chan struct{} // a prompts/list_changed or resources/list_changed arrived
	hooks     upstreamHooks // the proxy's, set before Start
	host      hostHooks     // the proxy's relay of requests to the host; nil: none
	firstDone chan struct{} // closed after the first attempt
	done      chan struct{} // closed when the supervisor returns
	cancel    context.CancelFunc
	startOnce sync.Once
	notifyMu  sync.Mutex // serializes OnToolsChanged

	progress sync.Map     // upstream progress token (string) -> func(*mcp.ProgressNotificationParams)
	tokens   atomic.Int64 // source of upstream progress tokens

	mu       sync.Mutex
	session  *mcp.ClientSession // nil while down
	tools    []*mcp.Tool        // last known list
	features Features           // last known prompts, resources, templates
	downErr  error              // why it is down (nil while up or before the first attempt)
	since    time.Time          // when it last came up or went down
	retryAt  time.Time          // next attempt, while down
	restarts int                // connection attempts after the first
}

// NewUpstream checks cfg and returns an Upstream that is not yet connected;
// call [Upstream.Start].
func NewUpstream(cfg UpstreamConfig) (*Upstream, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return newUpstream(cfg, nil), nil
}

// withDefaults checks c and returns it with its zero values filled in.
func (c UpstreamConfig) withDefaults() (UpstreamConfig, error) {
	if err := c.validate(); err != nil {
		return c, err
	}
	if c.RestartBase == 0 {
		c.RestartBase = DefaultRestartBase
	}
	if c.RestartMax == 0 {
		c.RestartMax = DefaultRestartMax
	}
	if c.RestartMax < c.RestartBase {
		return c, fmt.Errorf("mcptool: upstream %q: RestartMax (%v) is below RestartBase (%v)", c.Name, c.RestartMax, c.RestartBase)
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// newUpstream returns an Upstream of checked cfg whose client asks host for
// what its server asks of the host (nil: it declares no client capabilities).
func newUpstream(cfg UpstreamConfig, host hostHooks) *Upstream {
	u := &Upstream{
		cfg:       cfg,
		refresh:   make(chan struct{}, 1),
		relist:    make(chan struct{}, 1),
		firstDone: make(chan struct{}),
		done:      make(chan struct{}),
	}
	u.host = host
	u.client = mcp.NewClient(&mcp.Implementation{Name: "loopctl-mcptool", Version: "1"}, u.clientOptions())
	if u.host != nil {
		u.client.AddReceivingMiddleware(hostRequests(u))
	}
	return u
}

// clientOptions are the options of u's MCP client: the notifications it
// follows and, with a host, the requests it relays.
func (u *Upstream) clientOptions() *mcp.ClientOptions {
	opts := &mcp.ClientOptions{
		// Without a host there are no roots, sampling or elicitation to offer.
		Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case u.refresh <- struct{}{}:
			default:
			}
		},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { u.kickRelist() },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { u.kickRelist() },
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			if u.hooks.updated != nil {
				u.hooks.updated(req.Params)
			}
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			if u.hooks.log != nil {
				u.hooks.log(req.Params)
			}
		},
		// Progress of the calls is relayed as it is read (see withProgress),
		// so none reaches the SDK's own handler late.
		Logger: sdkLogger(u.cfg.Logger),
	}
	if h := u.host; h != nil {
		opts.Capabilities = &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}}}
		opts.CreateMessageWithToolsHandler = func(ctx context.Context, req *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return h.createMessage(ctx, u, req.Params)
		}
		opts.ElicitationHandler = func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return h.elicit(ctx, u, req.Params)
		}
		opts.ElicitationCompleteHandler = func(ctx context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			h.elicitationComplete(ctx, u, req.Params)
		}
	}
	return opts
}

// kickRelist asks the supervisor to list prompts and resources again.
func (u *Upstream) kickRelist() {
	select {
	case u.relist <- struct{}{}:
	default:
	}
}

// Name returns the server's name.
func (u *Upstream) Name() string { return u.cfg.Name }

// Start connects in the background until [Upstream.Close]. ctx bounds the
// upstream's whole life (its cancellation acts like Close without waiting).
// Calling Start again does nothing.
func (u *Upstream) Start(ctx context.Context) {
	u.startOnce.Do(func() {
		ctx, cancel := context.WithCancel(ctx)
		u.cancel = cancel
		go u.run(ctx)
	})
}

// WaitFirst waits until the first connection attempt has ended (connected and
// listed, or failed) or ctx is done, and returns ctx.Err() in the latter case.
func (u *Upstream) WaitFirst(ctx context.Context) error {
	select {
	case <-u.firstDone:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops reconnecting, closes the connection (ending a command's
// process) and waits for the background goroutine. It is safe to call more
// than once, and before Start.
func (u *Upstream) Close() error {
	u.startOnce.Do(func() { close(u.done) }) // never started: nothing runs
	if u.cancel != nil {
		u.cancel()
	}
	<-u.done
	return nil
}

// Tools returns the last tool list the server sent (nil before the first).
// The list is kept while the server is down. The tools are shared: do not
// modify them.
func (u *Upstream) Tools() []*mcp.Tool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.tools)
}

// Tool returns the named tool from the last list, or nil.
func (u *Upstream) Tool(name string) *mcp.Tool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, t := range u.tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// Status is a snapshot of an [Upstream]'s connection.
type Status struct {
	Up       bool          // connected now
	Since    time.Time     // when it came up or went down (zero before the first attempt)
	Err      error         // why it is down (nil while up)
	RetryIn  time.Duration // until the next connection attempt, while down
	Restarts int           // connection attempts (process starts, for a command) after the first
}

// Status returns the connection's state now.
func (u *Upstream) Status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	s := Status{Up: u.session != nil, Since: u.since, Err: u.downErr, Restarts: u.restarts}
	if !s.Up && !u.retryAt.IsZero() {
		s.RetryIn = max(time.Until(u.retryAt), 0)
	}
	return s
}

// DownError is what [Upstream.CallTool] returns while the server is not
// connected. errors.Is(err, ErrDown) is true.
type DownError struct {
	Server  string        // the upstream's name
	Err     error         // why it is down (nil before the first attempt ended)
	RetryIn time.Duration // until the next connection attempt
}

// ErrDown matches every [*DownError].
var ErrDown = errors.New("mcp server is down")

// Error returns text such as
//
//	mcp server "fs" is down (connection closed); reconnecting in 1.2s
func (e *DownError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mcp server %q is down", e.Server)
	if e.Err != nil {
		fmt.Fprintf(&b, " (%v)", e.Err)
	}
	b.WriteString("; reconnecting " + durtext.Wait(e.RetryIn))
	return b.String()
}

// Is reports whether target is ErrDown.
func (e *DownError) Is(target error) bool { return target == ErrDown }

// Unwrap returns Err.
func (e *DownError) Unwrap() error { return e.Err }

// CallTool calls the server's tool name with args (a JSON object, or nil for
// none) on the current connection. ctx reaches the server: when it is done
// the SDK sends notifications/cancelled and CallTool returns ctx.Err() at
// once. While the server is down it returns a [*DownError] without waiting.
// A result with IsError set is returned with a nil error.
func (u *Upstream) CallTool(ctx context.Context, name string, args []byte) (*mcp.CallToolResult, error) {
	return u.CallToolProgress(ctx, name, args, nil)
}

// CallToolProgress is [Upstream.CallTool] that also asks the server for
// progress notifications and hands each to onProgress (nil: none), in the
// order the server sent them and each before the result: onProgress runs on
// the goroutine that reads the connection, as the notification is read, so
// it must not wait for this upstream. The token the server sees is the
// Upstream's own, so callers' tokens never collide.
func (u *Upstream) CallToolProgress(ctx context.Context, name string, args []byte, onProgress func(*mcp.ProgressNotificationParams)) (*mcp.CallToolResult, error) {
	cs, err := u.current()
	if err != nil {
		return nil, err
	}
	p := &mcp.CallToolParams{Name: name}
	if len(args) > 0 {
		p.Arguments = rawJSON(args)
	}
	if onProgress != nil {
		token := "loopctl-" + strconv.FormatInt(u.tokens.Add(1), 10)
		u.progress.Store(token, onProgress)
		defer u.progress.Delete(token)
		p.SetProgressToken(token)
	}
	return cs.CallTool(ctx, p)
}
