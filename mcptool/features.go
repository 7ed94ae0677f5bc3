package mcptool

import (
	"context"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Features is what an [Upstream] server offers besides tools, as of its last
// listing: its capabilities (from the handshake), prompts, resources and
// resource templates. A list is nil when the server has no such capability.
// The values are shared: do not modify them.
type Features struct {
	Capabilities *mcp.ServerCapabilities // as the server declared them
	Prompts      []*mcp.Prompt
	Resources    []*mcp.Resource
	Templates    []*mcp.ResourceTemplate
}

// upstreamHooks are the proxy's hooks into an Upstream, set before Start.
type upstreamHooks struct {
	features func(Features, bool)                         // after every listing; true right after a (re)connection
	updated  func(*mcp.ResourceUpdatedNotificationParams) // notifications/resources/updated
	log      func(*mcp.LoggingMessageParams)              // notifications/message
}

// Features returns what the server offers besides tools, as of its last
// listing (zero before the first connection); kept while it is down.
func (u *Upstream) Features() Features {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.features
}

// current returns the current session, or a [*DownError] while down.
func (u *Upstream) current() (*mcp.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.session != nil {
		return u.session, nil
	}
	down := &DownError{Server: u.cfg.Name, Err: u.downErr}
	if !u.retryAt.IsZero() {
		down.RetryIn = max(time.Until(u.retryAt), 0)
	}
	return nil, down
}

// listFeatures lists what cs offers besides tools, per its capabilities. A
// listing that fails is logged and left empty: tools still work.
func (u *Upstream) listFeatures(ctx context.Context, cs *mcp.ClientSession) Features {
	var f Features
	if ir := cs.InitializeResult(); ir != nil {
		f.Capabilities = ir.Capabilities
	}
	c := f.Capabilities
	if c == nil {
		return f
	}
	warn := func(what string, err error) {
		u.cfg.Logger.Warn("mcp "+what+" failed", "server", u.cfg.Name, "err", err)
	}
	var err error
	if c.Prompts != nil {
		if f.Prompts, err = collect(cs.Prompts(ctx, nil)); err != nil {
			warn("prompts/list", err)
		}
		f.Prompts = nonNil(f.Prompts)
	}
	if c.Resources != nil {
		if f.Resources, err = collect(cs.Resources(ctx, nil)); err != nil {
			warn("resources/list", err)
		}
		if f.Templates, err = collect(cs.ResourceTemplates(ctx, nil)); err != nil {
			warn("resources/templates/list", err)
		}
		f.Resources, f.Templates = nonNil(f.Resources), nonNil(f.Templates)
	}
	return f
}

// relistFeatures re-lists after a list_changed notification.
func (u *Upstream) relistFeatures(ctx context.Context, cs *mcp.ClientSession) {
	f := u.listFeatures(ctx, cs)
	u.mu.Lock()
	u.features = f
	u.mu.Unlock()
	u.featuresChanged(f, false)
}

// featuresChanged hands a new listing to the proxy's hook, serialized with
// OnToolsChanged.
func (u *Upstream) featuresChanged(f Features, connected bool) {
	if u.hooks.features == nil {
		return
	}
	u.notifyMu.Lock()
	defer u.notifyMu.Unlock()
	u.hooks.features(f, connected)
}

// collect gathers every page of a listing.
func collect[T any](seq func(func(T, error) bool)) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// GetPrompt gets a prompt from the server on the current connection; while
// the server is down it returns a [*DownError] at once. The protocol's own
// _meta keys in p (another hop's) are not sent, here and in ReadResource and
// Complete: this connection's SDK sets its own.
func (u *Upstream) GetPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	cs, err := u.current()
	if err != nil {
		return nil, err
	}
	return cs.GetPrompt(ctx, withoutProtocolMeta(p))
}

// ReadResource reads a resource from the server on the current connection;
// while the server is down it returns a [*DownError] at once.
func (u *Upstream) ReadResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	cs, err := u.current()
	if err != nil {
		return nil, err
	}
	return cs.ReadResource(ctx, withoutProtocolMeta(p))
}

// Complete asks the server for completions on the current connection; while
// the server is down it returns a [*DownError] at once.
func (u *Upstream) Complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	cs, err := u.current()
	if err != nil {
		return nil, err
	}
	return cs.Complete(ctx, withoutProtocolMeta(p))
}

// subscribe (un)subscribes to a resource on the current connection.
func (u *Upstream) subscribe(ctx context.Context, uri string, on bool) error {
	cs, err := u.current()
	if err != nil {
		return err
	}
	if on {
		return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	}
	return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
}

// setLogLevel sets the server's logging level on the current connection.
func (u *Upstream) setLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	cs, err := u.current()
	if err != nil {
		return err
	}
	return cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level})
}

// hasTemplateFor reports whether one of f's templates could produce uri
// (a literal prefix match up to the template's first expression).
func (f Features) hasTemplateFor(uri string) bool {
	return slices.ContainsFunc(f.Templates, func(t *mcp.ResourceTemplate) bool { return templateMatches(t.URITemplate, uri) })
}

// templateMatches reports whether uri starts with the literal part of tmpl
// before its first expression (or equals tmpl when it has none).
func templateMatches(tmpl, uri string) bool {
	for i := range len(tmpl) {
		if tmpl[i] == '{' {
			return len(uri) >= i && uri[:i] == tmpl[:i]
		}
	}
	return uri == tmpl
}
