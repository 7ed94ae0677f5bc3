package mcptool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What a Proxy passes through besides tools: prompts (served under the same
// names as tools: "server__prompt" with several upstreams), resources and
// resource templates (under their own URIs; the first upstream to list a URI
// serves it), subscriptions to resources, completions and logging. None of
// these passes a breaker: they are forwarded with the proxy's Timeout, and a
// server that is down answers with an error at once.

// passState is the proxy's view of the upstreams' prompts and resources.
type passState struct {
	prompts   map[string]*passItem // by served name
	resources map[string]*passItem // by URI
	templates map[string]*passItem // by URI template
	subs      map[string]int       // subscribed URI -> client subscriptions
	level     mcp.LoggingLevel     // the most verbose level a client asked for ("": none)
}

// passItem is one forwarded prompt, resource or template.
type passItem struct {
	up   *Upstream
	name string // the prompt's name on the upstream
	wire string // the served definition as JSON, to skip unchanged re-adds
}

// levels orders logging levels from the most verbose.
var levels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func levelRank(l mcp.LoggingLevel) int {
	for i, x := range levels {
		if x == l {
			return i
		}
	}
	return len(levels)
}

// hooksFor returns the hooks through which u's features reach the proxy.
func (p *Proxy) hooksFor(u *Upstream) upstreamHooks {
	return upstreamHooks{
		features: func(f Features, connected bool) { p.syncFeatures(u, f, connected) },
		updated: func(n *mcp.ResourceUpdatedNotificationParams) {
			p.server.ResourceUpdated(context.Background(), n)
		},
		log: func(n *mcp.LoggingMessageParams) {
			if n.Logger == "" && len(p.upstreams) > 1 {
				c := *n
				c.Logger = u.Name()
				n = &c
			}
			for ss := range p.server.Sessions() {
				ss.Log(context.Background(), n) // filtered by each session's level
			}
		},
	}
}

// syncFeatures makes the served prompts, resources and templates of u match
// its new listing; after a (re)connection it also restores the logging level
// and the resource subscriptions the clients hold.
func (p *Proxy) syncFeatures(u *Upstream, f Features, connected bool) {
	p.mu.Lock()
	p.syncPrompts(u, f.Prompts)
	p.syncResources(u, f.Resources)
	p.syncTemplates(u, f.Templates)
	level := p.pass.level
	var subs []string
	for uri := range p.pass.subs {
		if p.ownerLocked(uri) == u {
			subs = append(subs, uri)
		}
	}
	p.mu.Unlock()
	if !connected {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.cfg.Timeout)
	defer cancel()
	if level != "" && f.Capabilities != nil && f.Capabilities.Logging != nil {
		if err := u.setLogLevel(ctx, level); err != nil {
			p.log.Warn("mcp logging/setLevel failed", "server", u.Name(), "err", err)
		}
	}
	for _, uri := range subs {
		if err := u.subscribe(ctx, uri, true); err != nil {
			p.log.Warn("mcp resources/subscribe failed", "server", u.Name(), "uri", uri, "err", err)
		}
	}
}

// wireOf is v as JSON ("" if it cannot be encoded).
func wireOf(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// syncPrompts serves u's prompts; p.mu is held.
func (p *Proxy) syncPrompts(u *Upstream, prompts []*mcp.Prompt) {
	keep := map[string]bool{}
	for _, pr := range prompts {
		served := *pr
		served.Name = p.servedName(u.Name(), pr.Name)
		keep[served.Name] = true
		wire := wireOf(&served)
		if old := p.pass.prompts[served.Name]; old != nil && old.wire == wire {
			continue
		}
		it := &passItem{up: u, name: pr.Name, wire: wire}
		p.server.AddPrompt(&served, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
			defer cancel()
			params := *req.Params
			params.Name = it.name
			return it.up.GetPrompt(ctx, &params)
		})
		p.pass.prompts[served.Name] = it
	}
	dropGone(p.pass.prompts, u, keep, p.server.RemovePrompts)
}

// syncResources serves u's resources; p.mu is held.
func (p *Proxy) syncResources(u *Upstream, resources []*mcp.Resource) {
	syncOwned(p, u, resources, p.pass.resources, func(r *mcp.Resource) string { return r.URI },
		func(r *mcp.Resource, it *passItem) { p.server.AddResource(r, p.readVia(it)) },
		p.server.RemoveResources, "resource", "uri")
}

// syncTemplates serves u's resource templates; p.mu is held.
func (p *Proxy) syncTemplates(u *Upstream, templates []*mcp.ResourceTemplate) {
	syncOwned(p, u, templates, p.pass.templates, func(t *mcp.ResourceTemplate) string { return t.URITemplate },
		func(t *mcp.ResourceTemplate, it *passItem) { p.server.AddResourceTemplate(t, p.readVia(it)) },
		p.server.RemoveResourceTemplates, "resource template", "uriTemplate")
}

// syncOwned serves u's items of one kind in table, by key: an item another
// upstream already serves under the same key stays theirs, a new or changed
// one is added (a malformed one, which add panics on, is skipped with a log
// record naming what and its field), and u's items that are gone are
// removed. p.mu is held.
func syncOwned[T any](p *Proxy, u *Upstream, items []T, table map[string]*passItem, key func(T) string,
	add func(T, *passItem), remove func(...string), what, field string) {
	keep := map[string]bool{}
	for _, v := range items {
		k := key(v)
		if old := table[k]; old != nil && old.up != u {
			continue // another upstream serves this key
		}
		keep[k] = true
		wire := wireOf(v)
		if old := table[k]; old != nil && old.wire == wire {
			continue
		}
		it := &passItem{up: u, wire: wire}
		if err := guard(func() { add(v, it) }); err != nil {
			p.log.Warn("mcp "+what+" skipped", "server", u.Name(), field, k, "err", err)
			delete(keep, k)
			continue
		}
		table[k] = it
	}
	dropGone(table, u, keep, remove)
}

// dropGone removes from table, and with remove from the server, u's
// entries that are not in keep.
func dropGone(table map[string]*passItem, u *Upstream, keep map[string]bool, remove func(...string)) {
	var gone []string
	for k, it := range table {
		if it.up == u && !keep[k] {
			gone = append(gone, k)
			delete(table, k)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
}

// readVia forwards resources/read to it's upstream.
func (p *Proxy) readVia(it *passItem) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
		defer cancel()
		return it.up.ReadResource(ctx, req.Params)
	}
}

// guard turns the SDK's panic on an invalid definition into an error.
func guard(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid definition: %v", r)
		}
	}()
	f()
	return nil
}

// ownerLocked returns the upstream serving uri: the one listing it, else the
// one whose template matches, else the only upstream; nil if none. p.mu is held.
func (p *Proxy) ownerLocked(uri string) *Upstream {
	if it := p.pass.resources[uri]; it != nil {
		return it.up
	}
	for tmpl, it := range p.pass.templates {
		if templateMatches(tmpl, uri) {
			return it.up
		}
	}
	if len(p.upstreams) == 1 {
		return p.upstreams[0]
	}
	return nil
}

// subscribe is the SDK's SubscribeHandler (on true) and UnsubscribeHandler:
// the first client subscription to a URI subscribes upstream, the last one's
// end unsubscribes.
func (p *Proxy) subscribe(ctx context.Context, uri string, on bool) error {
	p.mu.Lock()
	u := p.ownerLocked(uri)
	if u == nil {
		p.mu.Unlock()
		return mcp.ResourceNotFoundError(uri)
	}
	n := p.pass.subs[uri]
	if on {
		p.pass.subs[uri] = n + 1
	} else if n > 1 {
		p.pass.subs[uri] = n - 1
	} else {
		delete(p.pass.subs, uri)
	}
	first, last := on && n == 0, !on && n == 1
	p.mu.Unlock()
	if !first && !last {
		return nil
	}
	if !on {
		// the SDK unsubscribes when a subscriptions/listen stream ends, with
		// that stream's context already done
		ctx = context.WithoutCancel(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	err := u.subscribe(ctx, uri, on)
	if err != nil && on {
		p.mu.Lock()
		if p.pass.subs[uri]--; p.pass.subs[uri] <= 0 {
			delete(p.pass.subs, uri)
		}
		p.mu.Unlock()
	}
	return err
}

// complete is the SDK's CompletionHandler: a prompt's argument goes to the
// prompt's upstream (under its own name), a template's to the template's.
func (p *Proxy) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	params := *req.Params
	ref := *params.Ref
	params.Ref = &ref
	p.mu.Lock()
	var u *Upstream
	switch ref.Type {
	case "ref/prompt":
		if it := p.pass.prompts[ref.Name]; it != nil {
			u, ref.Name = it.up, it.name
		}
	case "ref/resource":
		if it := p.pass.templates[ref.URI]; it != nil {
			u = it.up
		} else {
			u = p.ownerLocked(ref.URI)
		}
	}
	p.mu.Unlock()
	if u == nil || !u.has(func(c *mcp.ServerCapabilities) bool { return c.Completions != nil }) {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	return u.Complete(ctx, &params)
}

// has reports whether u's last handshake declared a capability.
func (u *Upstream) has(c func(*mcp.ServerCapabilities) bool) bool {
	f := u.Features()
	return f.Capabilities != nil && c(f.Capabilities)
}

// middleware answers initialize (and server/discover) with every capability
// the upstreams declared, forwards logging/setLevel to them, and a call of a
// tool the proxy does not serve to the server its name points at.
func (p *Proxy) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if res, ok, err := p.unknownTool(ctx, req); ok {
				return res, err
			}
		}
		if method == "logging/setLevel" {
			if sp, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && sp != nil {
				p.setLevel(ctx, sp.Level)
			}
		}
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		switch r := res.(type) {
		case *mcp.InitializeResult:
			r.Capabilities = p.capabilities(r.Capabilities)
		case *mcp.DiscoverResult:
			r.Capabilities = p.capabilities(r.Capabilities)
		}
		return res, err
	}
}

// setLevel forwards a client's logging level to every upstream with logging,
// keeping the most verbose level asked for (the SDK filters per session).
func (p *Proxy) setLevel(ctx context.Context, level mcp.LoggingLevel) {
	p.mu.Lock()
	if p.pass.level != "" && levelRank(p.pass.level) <= levelRank(level) {
		p.mu.Unlock()
		return
	}
	p.pass.level = level
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	for _, u := range p.upstreams {
		if u.has(func(c *mcp.ServerCapabilities) bool { return c.Logging != nil }) {
			if err := u.setLogLevel(ctx, level); err != nil {
				p.log.Warn("mcp logging/setLevel failed", "server", u.Name(), "err", err)
			}
		}
	}
}

// capabilities returns base (the SDK's) with prompts, resources,
// completions and logging set to what the upstreams declared.
func (p *Proxy) capabilities(base *mcp.ServerCapabilities) *mcp.ServerCapabilities {
	c := &mcp.ServerCapabilities{}
	if base != nil {
		c = base
	}
	c.Prompts, c.Resources, c.Completions, c.Logging = nil, nil, nil, nil
	for _, u := range p.upstreams {
		uc := u.Features().Capabilities
		if uc == nil {
			continue
		}
		if uc.Prompts != nil {
			c.Prompts = &mcp.PromptCapabilities{ListChanged: true}
		}
		if uc.Resources != nil {
			if c.Resources == nil {
				c.Resources = &mcp.ResourceCapabilities{ListChanged: true}
			}
			c.Resources.Subscribe = c.Resources.Subscribe || uc.Resources.Subscribe
		}
		if uc.Completions != nil {
			c.Completions = &mcp.CompletionCapabilities{}
		}
		if uc.Logging != nil {
			c.Logging = &mcp.LoggingCapabilities{}
		}
	}
	return c
}
