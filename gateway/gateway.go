package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/dashboard"
	"github.com/loopctl/loopctl-go/fallback"
	loopmetrics "github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/retry"
	"github.com/prometheus/client_golang/prometheus"
)

// Options are the gateway's runtime hooks, for what a configuration file
// cannot say. The zero value is fine.
type Options struct {
	// Transport sends upstream requests. nil: a transport tuned for a proxy
	// (keep-alives, 256 idle connections per upstream), closed by
	// [Gateway.Close].
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
	// NewBreaker creates the model breaker of each configured model and of
	// each upstream/model addressed directly, from the settings the config
	// gives (OnTransition feeds the gateway's metrics: keep it); it is where
	// a shared breaker store (docs/FLEET.md) plugs in. nil: fallback.New
	// (in-process state).
	NewBreaker func(name string, s fallback.Settings) (ModelBreaker, error)
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
	Backend func(model string) fallback.Backend
	// Responses, when set, shares the Responses API's response ids (which
	// upstream model produced each) with every gateway using the same store
	// (e.g. fleet.Store's ResponsePins). nil: this process only.
	Responses ResponseStore
	// Registry is where the gateway registers its Prometheus collectors and
	// what /metrics serves. nil: a new registry (see [Gateway.Registry]).
	Registry *prometheus.Registry
}

// Gateway is an OpenAI-compatible gateway: an http.Handler that serves
// POST /v1/chat/completions through a model breaker and retry ladder per
// model, GET /v1/models, /healthz, /readyz and /metrics (docs/GATEWAY.md). It is
// safe for concurrent use.
type Gateway struct {
	cfg       Config
	opt       Options
	client    *http.Client
	own       *http.Transport // the default transport, closed by Close
	now       func() time.Time
	keys      [][sha256.Size]byte
	keyNames  []string
	admin     [][sha256.Size]byte // admin_keys: the keys of /metrics and /dashboard/
	upstreams map[string]*upstream
	models    map[string]*route // configured models, by name
	order     []*route          // configured models, in config order
	policy    retry.Policy
	maxBody   int64
	request   time.Duration
	total     time.Duration // timeouts.total: the request's deadline (SEMANTICS §7.3)
	firstByte time.Duration
	idle      time.Duration
	maxResp   int64
	held      held // bytes of upstream answers held
	modelList []byte
	log       *slog.Logger
	m         *metrics
	pins      *pins

	directMu  sync.RWMutex
	direct    map[string]*route // upstream/model routes, created on first use
	maxDirect int               // at most this many (limits.max_direct; 0: none)
	tick      atomic.Int64      // the clock of the routes' last use
	targets   map[string]bool   // upstream models of the configured models
}

// upstream is one configured upstream.
type upstream struct {
	name string
	api  string // APIOpenAI or APIAnthropic
	base string // base URL without a trailing "/"; a wire's path is appended
	key  string // "": no credentials sent
}

// route is a model name with its breaker.
type route struct {
	name     string
	mgr      *fallback.Manager // the local breaker, or
	shared   ModelBreaker      // one from Options.NewBreaker
	budget   int
	proto    string            // the wire of the primary's upstream (APIOpenAI, APIAnthropic)
	settings fallback.Settings // what the breaker was built with
	targets  map[string]*target
	policy   retry.Policy
	used     atomic.Int64 // direct routes: the gateway's tick at the last use
	direct   bool         // an upstream/model route: no chain, refused while open
}

// target is one upstream model a route may send to.
type target struct {
	ref    string // upstream/model
	up     *upstream
	quoted []byte // the model name as a JSON string
}

// New builds a gateway from cfg, which must be valid (see [Config.Validate]),
// reading the keys its key_env and api_key_env entries name. The error
// names every problem by key path.
func New(cfg Config, opt Options) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	g := &Gateway{
		cfg:       cfg,
		opt:       opt,
		now:       opt.Now,
		upstreams: map[string]*upstream{},
		models:    map[string]*route{},
		direct:    map[string]*route{},
		maxBody:   orDefault(cfg.Limits.MaxBody, DefaultMaxBody),
		request:   orDefault(cfg.Timeouts.Request, DefaultRequest),
		total:     orDefault(cfg.Timeouts.Total, DefaultTotal),
		firstByte: orDefault(cfg.Timeouts.FirstByte, DefaultFirstByte),
		idle:      orDefault(cfg.Timeouts.Idle, DefaultIdle),
		maxResp:   orDefault(cfg.Limits.MaxResponse, DefaultMaxResponse),
		maxDirect: max(int(orDefault(int64(cfg.Limits.MaxDirect), DefaultMaxDirect)), 0),
		targets:   map[string]bool{},
		log:       opt.Logger,
		pins:      newPins(opt.Responses),
	}
	g.held.limit = g.maxResp * ResponseBudgetFactor
	if g.now == nil {
		g.now = time.Now
	}
	getenv := opt.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var ps problems
	for i, k := range cfg.ClientKeys {
		key := k.Key
		if key == "" {
			if key = getenv(k.KeyEnv); key == "" {
				ps.add(fmt.Sprintf("client_keys[%d].key_env", i), "environment variable %s is not set", k.KeyEnv)
				continue
			}
		}
		g.keys = append(g.keys, sha256.Sum256([]byte(key)))
		g.keyNames = append(g.keyNames, k.Name)
	}
	for i, k := range cfg.AdminKeys {
		key := k.Key
		if key == "" {
			if key = getenv(k.KeyEnv); key == "" {
				ps.add(fmt.Sprintf("admin_keys[%d].key_env", i), "environment variable %s is not set", k.KeyEnv)
				continue
			}
		}
		g.admin = append(g.admin, sha256.Sum256([]byte(key)))
	}
	for i, u := range cfg.Upstreams {
		up := &upstream{name: u.Name, api: u.API, base: strings.TrimRight(u.BaseURL, "/")}
		if up.api == "" {
			up.api = APIOpenAI
		}
		key := u.APIKey
		if key == "" && u.APIKeyEnv != "" {
			if key = getenv(u.APIKeyEnv); key == "" {
				ps.add(fmt.Sprintf("upstreams[%d].api_key_env", i), "environment variable %s is not set", u.APIKeyEnv)
			}
		}
		up.key = key
		g.upstreams[u.Name] = up
	}
	if err := ps.err(); err != nil {
		return nil, err
	}
	g.policy = retry.Policy{
		MaxRetries:       cfg.Retry.MaxRetries,
		BaseDelay:        cfg.Retry.BaseDelay,
		MaxDelay:         cfg.Retry.MaxDelay,
		RateLimitRetries: cfg.Retry.RateLimitRetries,
		RateLimitWait:    rateLimitWait(cfg.Retry.RateLimitWait),
		Rand:             opt.Rand,
	}
	if err := g.policy.Validate(); err != nil {
		return nil, &ConfigError{Problems: []Problem{{Path: "retry", Message: strings.TrimPrefix(err.Error(), "retry: ")}}}
	}
	g.m = newMetrics(opt.Registry, g)
	if opt.Dashboard == nil {
		log := dashboard.NewLog(100)
		hook := opt.OnTransition
		g.opt.OnTransition = func(model string, t fallback.Transition) {
			log.ModelHook(model)(t)
			if hook != nil {
				hook(model, t)
			}
		}
		g.opt.Dashboard = dashboard.New(func() dashboard.Sources {
			var src dashboard.Sources
			for _, b := range g.LocalBreakers() {
				src.Models = append(src.Models, dashboard.Model{Name: b.Name, Manager: b.Manager, Settings: b.Settings})
			}
			return src
		}, dashboard.Options{Title: "loopctl gateway", Log: log})
	}
	for i, m := range cfg.Models {
		rt, err := g.newRoute(m)
		if err != nil {
			return nil, &ConfigError{Problems: []Problem{{Path: fmt.Sprintf("models[%d]", i), Message: err.Error()}}}
		}
		g.models[m.Name] = rt
		g.order = append(g.order, rt)
		for ref := range rt.targets {
			g.targets[ref] = true
		}
	}
	type entry struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []entry `json:"data"`
	}{Object: "list", Data: []entry{}}
	for _, m := range cfg.Models {
		list.Data = append(list.Data, entry{ID: m.Name, Object: "model", OwnedBy: "loopctl"})
	}
	g.modelList, _ = json.Marshal(list)

	rt := opt.Transport
	if rt == nil {
		g.own = newTransport()
		rt = g.own
	}
	g.client = &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return g, nil
}

func orDefault[T int64 | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// newTransport returns a transport tuned for proxying to a few upstreams.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		WriteBufferSize:       16 << 10,
		ReadBufferSize:        16 << 10,
	}
}

// rateLimitWait is the ladder's RateLimitWait for Retry.RateLimitWait: the
// default for 0, no wait at all (the least positive cap) for a negative value.
func rateLimitWait(v time.Duration) time.Duration {
	switch {
	case v == 0:
		return DefaultRateLimitWait
	case v < 0:
		return time.Nanosecond
	}
	return v
}

// newRoute builds the route of a configured model or of a direct
// upstream/model reference (m.Chain empty, m.Name == m.Primary).
func (g *Gateway) newRoute(m Model) (*route, error) {
	b := m.Breaker
	s := fallback.Settings{
		Primary:                 m.Primary,
		Chain:                   m.Chain,
		TripThreshold:           b.TripThreshold,
		RecoveryTimeout:         b.RecoveryTimeout,
		RecoverySuccessesNeeded: b.RecoverySuccesses,
		MaxFailCount:            b.MaxFailCount,
		ProbeTimeout:            b.ProbeTimeout,
		QuotaCooldown:           b.QuotaCooldown,
		HedgeAfter:              m.HedgeAfter,
		HedgeBudget:             m.HedgeBudget,
		Now:                     g.opt.Now,
	}
	if g.opt.Backend != nil {
		s.Backend = g.opt.Backend(m.Name)
	}
	rt := &route{name: m.Name, targets: map[string]*target{}, settings: s}
	s.OnTransition = g.m.breakers.ModelTransitions(m.Name)
	if hook := g.opt.OnTransition; hook != nil {
		count := s.OnTransition
		s.OnTransition = func(t fallback.Transition) {
			count(t)
			hook(m.Name, t)
		}
	}
	var err error
	if g.opt.NewBreaker != nil {
		rt.shared, err = g.opt.NewBreaker(m.Name, s)
	} else {
		rt.mgr, err = fallback.New(s)
	}
	if err != nil {
		return nil, err
	}
	if rt.mgr != nil {
		if err := g.m.breakers.AddManager(m.Name, rt.mgr); err != nil {
			return nil, err
		}
	}
	rt.budget = m.Attempts
	if rt.budget == 0 {
		rt.budget = max(b.TripThreshold, 0) + 1
		if b.TripThreshold == 0 {
			rt.budget = 3 + 1
		}
		per := b.MaxFailCount
		if per == 0 {
			per = 2
		}
		rt.budget += per * len(m.Chain)
	}
	for _, ref := range append([]string{m.Primary}, m.Chain...) {
		upName, model, _ := strings.Cut(ref, "/")
		rt.targets[ref] = &target{ref: ref, up: g.upstreams[upName], quoted: quote(model)}
	}
	if tg := rt.targets[m.Primary]; tg.up != nil {
		rt.proto = tg.up.api
	}
	rt.policy = g.policy
	rt.policy.OnRetry = g.m.breakers.RetryHook(m.Name, loopmetrics.Model)
	return rt, nil
}

// Managers returns the model breaker of every configured model, by model
// name, and of every upstream/model addressed directly so far, by that
// reference, when they are local (no [Options.NewBreaker]). The map is a
// new one; the managers are the gateway's own.
func (g *Gateway) Managers() map[string]*fallback.Manager {
	out := map[string]*fallback.Manager{}
	for n, b := range g.routes() {
		if b.mgr != nil {
			out[n] = b.mgr
		}
	}
	return out
}

// Breakers returns the model breaker of every configured model and of
// every upstream/model addressed directly so far, local or not.
func (g *Gateway) Breakers() map[string]ModelBreaker {
	out := map[string]ModelBreaker{}
	for n, b := range g.routes() {
		out[n] = b.breaker()
	}
	return out
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
		if rt.mgr != nil {
			out = append(out, LocalBreaker{rt.name, rt.mgr, rt.settings})
		}
	}
	g.directMu.RLock()
	var direct []LocalBreaker
	for _, rt := range g.direct {
		if rt.mgr != nil {
			direct = append(direct, LocalBreaker{rt.name, rt.mgr, rt.settings})
		}
	}
	g.directMu.RUnlock()
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

func (g *Gateway) routes() map[string]*route {
	out := make(map[string]*route, len(g.models))
	for n, rt := range g.models {
		out[n] = rt
	}
	g.directMu.RLock()
	for n, rt := range g.direct {
		out[n] = rt
	}
	g.directMu.RUnlock()
	return out
}

// Registry returns the Prometheus registry /metrics serves.
func (g *Gateway) Registry() *prometheus.Registry { return g.m.reg }

// Close closes the idle upstream connections of the default transport.
func (g *Gateway) Close() {
	if g.own != nil {
		g.own.CloseIdleConnections()
	}
}
