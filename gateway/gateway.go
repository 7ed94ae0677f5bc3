package gateway

import (
	"context"
	"crypto/sha256"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/internal/retrybudget"
	"github.com/loopctl/loopctl-go/retry"
	"github.com/prometheus/client_golang/prometheus"
)

// Options are the gateway's runtime hooks, for what a configuration file
// cannot say. The zero value is fine.
type Options struct {
	// Transport sends upstream requests, and an azure upstream's token
	// requests (Microsoft Entra ID, a managed identity endpoint). nil: a
	// transport tuned for a proxy (keep-alives, 256 idle connections per
	// upstream), closed by [Gateway.Close].
	Transport http.RoundTripper
	// Logger gets one line per request (level Info; Warn for failures).
	// nil: no request log.
	Logger *slog.Logger
	// Getenv reads the environment variables the configuration names.
	// nil: os.Getenv.
	Getenv func(string) string
	// Now is the breakers' clock (fallback.Settings.Now) and the clock
	// Retry-After values are computed with. nil: time.Now.
	Now func() time.Time
	// Rand is the retry ladder's random source (retry.Policy.Rand). nil:
	// math/rand/v2.
	Rand func() float64
	// Ready reports whether the gateway is ready, for /readyz (an error:
	// 503). nil: always ready. A gateway whose store is down still serves,
	// with local breakers: that is ready (docs/GATEWAY.md §7).
	Ready func(context.Context) error
	// StoreMode, when set, says where the breakers' state lives, in
	// /readyz's body: "ready (<StoreMode()>)", e.g. "store: shared" or
	// "store: local".
	StoreMode func() string
	// OnTransition, when set, is called with every transition of every
	// model breaker (after the gateway's own bookkeeping), e.g. to feed a
	// dashboard's transition log.
	OnTransition func(model string, t fallback.Transition)
	// Dashboard is served at /dashboard/ (with the prefix stripped). nil: a
	// dashboard.Handler showing every model breaker of the gateway
	// ([Gateway.LocalBreakers]) and its last transitions.
	Dashboard http.Handler
	// Backend, when set, gives the fallback.Backend of each model breaker
	// (fallback.Settings.Backend), e.g. a fleet.Store's ModelBackend: the
	// state is then shared with every process using the same store
	// (docs/FLEET.md), and the breakers are still *fallback.Manager values.
	// When the gateway drops a model breaker (a direct upstream/model name
	// evicted under limits.max_direct) and its Backend has a Release()
	// method, it calls it, so that the backend can forget that breaker.
	Backend func(model string) fallback.Backend
	// Responses, when set, shares the Responses API's response ids (which
	// upstream model produced each) with every gateway using the same store
	// (e.g. fleet.Store's ResponsePins). nil: this process only.
	Responses ResponseStore
	// MemberBackend, when set, keeps the state of the pools' member breakers
	// outside the process (their breaker.Settings.Backend), e.g. a
	// fleet.Store's ToolBackend: each member breaker is then shared, under
	// member@<upstream>/<model>, with every gateway using the same store
	// (docs/FLEET.md), and a reload that keeps the deployment reconfigures it
	// on the same keys. The pools' latency estimates, in-flight counts,
	// headroom and the breakers' rate windows stay in the process.
	MemberBackend breaker.Backend
	// MemberDisables, when set, keeps the pool members disabled by hand
	// (POST /admin/breakers/{model} with member) where every gateway using
	// it reads them, e.g. a fleet.Store's MemberDisables. nil: this process
	// only.
	MemberDisables MemberDisableStore
	// Registry is where the gateway registers its Prometheus collectors and
	// what /metrics serves. nil: a new registry (see [Gateway.Registry]).
	Registry *prometheus.Registry
	// Observer, when set, is told of every request on a model endpoint
	// and of every upstream attempt, e.g. to trace them (see [Observer]).
	Observer Observer
}

// Gateway is loopctl's gateway: an http.Handler that serves the model wires
// (POST /v1/chat/completions, /v1/responses, /v1/messages and
// /v1/messages/count_tokens, /v1/embeddings) through a model breaker and
// retry ladder per model, translating between wires where a chain crosses
// them, and GET /v1/models, /healthz, /readyz, /metrics and /dashboard/,
// and /admin/breakers (docs/GATEWAY.md). It is safe for concurrent use.
type Gateway struct {
	cfg       Config
	opt       Options
	now       func() time.Time
	transport transport // the upstream transport
	clients   keyring   // the client keys (keys) and their names
	admins    keyring   // admin_keys: the keys of /admin, /metrics and /dashboard/
	upstreams map[string]*upstream
	models    map[string]*route // configured models, by name
	order     []*route          // configured models, in config order
	direct    directRoutes
	lists     modelLists
	retries   retries
	limits    limits
	held      held        // bytes of upstream answers and request bodies held
	timers    clockTimers // the attempts' timers
	log       *slog.Logger
	m         *meters
	pins      *pins
	pools     pools // the pools, their member breakers and figures (pools.go)
	// next is the gateway a reload built from this one (Reload), if any.
	next atomic.Pointer[Gateway]
}

// transport is the gateway's upstream transport: Options.Transport, or
// the gateway's own, which it closes (own set).
type transport struct {
	rt  http.RoundTripper
	own *http.Transport // the default transport, closed by Close; nil: the caller's
}

// keyring is a set of API keys, by their SHA-256, with each key's name in
// the same order (the request log's and the audit log's).
type keyring struct {
	keys  [][sha256.Size]byte
	names []string
}

// limits are the gateway's sizes and timeouts, defaults applied.
type limits struct {
	maxBody   int64         // limits.max_body
	maxResp   int64         // limits.max_response
	request   time.Duration // timeouts.request
	total     time.Duration // timeouts.total: the request's deadline (SEMANTICS §7.3)
	firstByte time.Duration // timeouts.first_byte
	idle      time.Duration // timeouts.idle
}

// retries are the retry ladder's policy and the retry budget's settings
// (retry.budget and retry.budget_burst, SEMANTICS §8.3).
type retries struct {
	policy retry.Policy
	budget Retry
}

// modelLists are the bodies of GET /v1/models, built once per config: in
// OpenAI's shape and in Anthropic's (§8.8).
type modelLists struct {
	openai    []byte
	anthropic []byte
}

// directRoutes are the routes of upstream/model names, created on first
// use and evicted, least recently used first, past limits.max_direct.
type directRoutes struct {
	mu      sync.RWMutex
	routes  map[string]*route
	max     int             // at most this many (limits.max_direct; 0: none)
	tick    atomic.Int64    // the clock of the routes' last use
	targets map[string]bool // upstream models of the configured models
}

// latest returns the gateway the reloads of g built last (g if none).
func (g *Gateway) latest() *Gateway {
	for n := g.next.Load(); n != nil; n = g.next.Load() {
		g = n
	}
	return g
}

// upstream is one configured upstream.
type upstream struct {
	name string
	api  string // APIOpenAI or APIAnthropic
	base string // base URL without a trailing "/"; a wire's path is appended
	key  string // "": no credentials sent
	// Parsed once (prepare): the URL of each wire (base + path; nil if it
	// does not parse) and the credentials header's value.
	urls [len(endpoints)]*url.URL
	cred []string
	// Translation (§8): the client wires it speaks (by wire.API), the
	// wire a request on any other reaches it on, and that target's
	// settings (its API and Model set per request).
	speaks [3]bool
	to     *endpoint
	target wire.Target
	// Authentication and hosts (§10): the header a static key goes in,
	// the authorizer of the other auth types (nil: the static key), and
	// a Bedrock or Vertex upstream's differences (nil: another host).
	credHeader  string
	auth        authorizer
	cloud       *cloud
	authLogged  atomic.Int64 // when its failing auth was last logged (Unix ns; see logAuthFailure)
	authFailing atomic.Bool  // its latest authentication could not be made (see pick)
	// azureVersion is an Azure OpenAI upstream's api-version: its paths
	// name the model as the deployment (azureURL). "": none.
	azureVersion string
}

// prepare parses the upstream's URL for every wire and builds its
// credentials header value, so that a request allocates neither.
func (u *upstream) prepare() {
	for i, w := range endpoints {
		if p, err := url.Parse(u.base + w.path); err == nil {
			u.urls[i] = p
		}
	}
	if u.credHeader == "" {
		u.credHeader = keyHeaders[AuthBearer]
		if u.api == APIAnthropic {
			u.credHeader = keyHeaders[AuthXAPIKey]
		}
	}
	switch {
	case u.key == "":
	case u.credHeader == keyHeaders[AuthBearer]:
		u.cred = []string{"Bearer " + u.key}
	default:
		u.cred = []string{u.key}
	}
}

// route is a model name with its breaker.
type route struct {
	name     string
	mgr      *fallback.Manager // its breaker (state in-process, or shared through Options.Backend)
	budget   int
	openai   bool              // an entry is on an openai upstream (embeddings)
	refusals bool              // on_refusal: fallback (§8.7)
	settings fallback.Settings // what the breaker was built with
	targets  map[string]*target
	policy   retry.Policy
	noRetry  bool         // retry.budget: 0: no same-model retries (SEMANTICS §8.3)
	used     atomic.Int64 // direct routes: the gateway's tick at the last use
	direct   bool         // an upstream/model route: no chain, refused while open
	notes    *routeNotes  // what the admin API adds (the last failure, the last transition); kept by a reload
	// poolHedges is the hedge bucket of hedges inside its pools (pool_hedge.go); kept by a reload.
	poolHedges *retrybudget.Bucket
}

// target is one upstream model a route may send to.
type target struct {
	ref    string // upstream/model
	model  string // the upstream's model name
	up     *upstream
	quoted []byte   // the model name as a JSON string
	hdr    []string // ref as a header value (shared: header values are only read)
	pool   *pooled  // a pool/<name> entry's pool (no upstream of its own: up nil)
}

// LocalBreaker is a model breaker of the gateway with the settings it was
// built with (what a dashboard needs for cooldowns and chain budgets).
type LocalBreaker struct {
	Name     string // the model name, or upstream/model for the direct form
	Manager  *fallback.Manager
	Settings fallback.Settings
}

// LocalBreakers returns the in-process model breakers: the configured
// models in config order, then the upstream/model routes used so far,
// sorted by name.
func (g *Gateway) LocalBreakers() []LocalBreaker {
	var out []LocalBreaker
	for _, rt := range g.order {
		out = append(out, LocalBreaker{rt.name, rt.mgr, rt.settings})
	}
	g.direct.mu.RLock()
	var direct []LocalBreaker
	for _, rt := range g.direct.routes {
		direct = append(direct, LocalBreaker{rt.name, rt.mgr, rt.settings})
	}
	g.direct.mu.RUnlock()
	slices.SortFunc(direct, func(a, b LocalBreaker) int { return strings.Compare(a.Name, b.Name) })
	return append(out, direct...)
}

// Models returns the configured model names, in config order.
func (g *Gateway) Models() []string {
	out := make([]string, len(g.order))
	for i, rt := range g.order {
		out[i] = rt.name
	}
	return out
}

// Registry returns the Prometheus registry /metrics serves.
func (g *Gateway) Registry() *prometheus.Registry { return g.m.reg }

// Close closes the idle upstream connections of the default transport.
func (g *Gateway) Close() {
	if g.transport.own != nil {
		g.transport.own.CloseIdleConnections()
	}
}
