package gateway

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/dashboard"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/retry"
)

// New builds a gateway from cfg, which must be valid (see [Config.Validate]),
// reading the keys its key_env, key_file, api_key_env and api_key_file
// entries name. The error
// names every problem by key path.
func New(cfg Config, opt Options) (*Gateway, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return build(cfg, opt)
}

// build builds the gateway of cfg, which New has validated.
func build(cfg Config, opt Options) (*Gateway, error) {
	g := newGateway(cfg, opt)
	// The transport comes first: an azure upstream's credential sends its
	// token requests through it.
	g.transport = upstreamTransport(opt.Transport)
	if err := g.readKeys(cfg, opt.Getenv); err != nil {
		return nil, err
	}
	if err := g.buildPolicy(cfg.Retry, opt.Rand); err != nil {
		return nil, err
	}
	g.m = newMeters(opt.Registry)
	g.m.reg.MustRegister(openUntil{g})
	g.m.addPools(g)
	if opt.Dashboard == nil {
		g.defaultDashboard()
	}
	if err := g.buildPools(cfg.Pools, nil); err != nil {
		return nil, err
	}
	if err := g.addModels(cfg.Models); err != nil {
		return nil, err
	}
	g.lists.openai = modelList(cfg.Models)
	g.lists.anthropic = anthropicModelList(cfg.Models)
	return g, nil
}

// newGateway returns the gateway of cfg and opt with the defaults applied
// to its timeouts and limits, and no keys, models or client yet.
func newGateway(cfg Config, opt Options) *Gateway {
	g := &Gateway{
		cfg:       cfg,
		opt:       opt,
		now:       opt.Now,
		upstreams: map[string]*upstream{},
		models:    map[string]*route{},
		direct: directRoutes{
			routes:  map[string]*route{},
			max:     max(int(orDefault(int64(cfg.Limits.MaxDirect), DefaultMaxDirect)), 0),
			targets: map[string]bool{},
		},
		limits: limits{
			maxBody:   orDefault(cfg.Limits.MaxBody, DefaultMaxBody),
			maxResp:   orDefault(cfg.Limits.MaxResponse, DefaultMaxResponse),
			request:   orDefault(cfg.Timeouts.Request, DefaultRequest),
			total:     orDefault(cfg.Timeouts.Total, DefaultTotal),
			firstByte: orDefault(cfg.Timeouts.FirstByte, DefaultFirstByte),
			idle:      orDefault(cfg.Timeouts.Idle, DefaultIdle),
		},
		retries: retries{budget: Retry{Budget: cfg.Retry.Budget, BudgetBurst: cfg.Retry.BudgetBurst}},
		log:     opt.Logger,
		pins:    newPins(opt.Responses),
	}
	g.held.limit = max(g.limits.maxResp, g.limits.maxBody) * ResponseBudgetFactor
	if g.now == nil {
		g.now = time.Now
	}
	return g
}

// readKeys reads the client, admin and upstream keys cfg names from the
// environment (getenv, nil: os.Getenv) and sets up the upstreams; the error
// names every variable that is not set.
func (g *Gateway) readKeys(cfg Config, getenv func(string) string) error {
	if getenv == nil {
		getenv = os.Getenv
	}
	var ps problems
	for i, k := range cfg.ClientKeys {
		if key, ok := ps.clientKey("client_keys", i, k, getenv); ok {
			g.clients.keys = append(g.clients.keys, sha256.Sum256([]byte(key)))
			g.clients.names = append(g.clients.names, k.Name)
		}
	}
	for i, k := range cfg.AdminKeys {
		if key, ok := ps.clientKey("admin_keys", i, k, getenv); ok {
			g.admins.keys = append(g.admins.keys, sha256.Sum256([]byte(key)))
			g.admins.names = append(g.admins.names, k.Name)
		}
	}
	for i, u := range cfg.Upstreams {
		g.upstreams[u.Name] = ps.newUpstream(i, u, getenv)
		ps.setAuth(fmt.Sprintf("upstreams[%d]", i), g.upstreams[u.Name], u, g.now, g.transport.rt)
	}
	return ps.err()
}

// clientKey returns entry i of list: its Key, or else the environment
// variable its KeyEnv names; false, with the problem recorded, when that
// variable is not set.
func (ps *problems) clientKey(list string, i int, k ClientKey, getenv func(string) string) (string, bool) {
	key := k.Key
	switch {
	case key != "":
	case k.KeyFile != "":
		key = ps.keyFile(fmt.Sprintf("%s[%d].key_file", list, i), k.KeyFile)
		return key, key != ""
	default:
		if key = getenv(k.KeyEnv); key == "" {
			ps.add(fmt.Sprintf("%s[%d].key_env", list, i), "environment variable %s is not set", k.KeyEnv)
			return "", false
		}
	}
	return key, true
}

// keyFile returns the key in the file at name (surrounding whitespace
// trimmed); "", with the problem recorded at path, when it cannot be read
// or holds no key.
func (ps *problems) keyFile(path, name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		ps.add(path, "%v", err)
		return ""
	}
	key := strings.TrimSpace(string(b))
	if key == "" {
		ps.add(path, "%s holds no key", name)
	}
	return key
}

// newUpstream returns upstream i of the config, u, with its key read from
// the environment (getenv); a variable that is not set is a problem.
func (ps *problems) newUpstream(i int, u Upstream, getenv func(string) string) *upstream {
	up := &upstream{name: u.Name, api: u.API, base: strings.TrimRight(u.BaseURL, "/")}
	if up.api == "" {
		up.api = APIOpenAI
	}
	key := u.APIKey
	if key == "" && u.APIKeyFile != "" {
		key = ps.keyFile(fmt.Sprintf("upstreams[%d].api_key_file", i), u.APIKeyFile)
	}
	if key == "" && u.APIKeyEnv != "" {
		if key = getenv(u.APIKeyEnv); key == "" {
			ps.add(fmt.Sprintf("upstreams[%d].api_key_env", i), "environment variable %s is not set", u.APIKeyEnv)
		}
	}
	up.key, up.azureVersion = key, u.APIVersion
	up.credHeader = keyHeaders[authType(u)]
	if c := newCloud(u); c != nil {
		up.api, up.cloud, up.base = APIAnthropic, c, c.base // the Anthropic family (§10.2)
	}
	up.prepare()
	up.setWires(u)
	return up
}

// buildPolicy sets the retry ladder every route starts from, from r and the
// random source rnd.
func (g *Gateway) buildPolicy(r Retry, rnd func() float64) error {
	g.retries.policy = retry.Policy{
		MaxRetries:       r.MaxRetries,
		BaseDelay:        r.BaseDelay,
		MaxDelay:         r.MaxDelay,
		RateLimitRetries: r.RateLimitRetries,
		RateLimitWait:    rateLimitWait(r.RateLimitWait),
		Rand:             rnd,
	}
	if err := g.retries.policy.Validate(); err != nil {
		return &ConfigError{Problems: []Problem{{Path: "retry", Message: strings.TrimPrefix(err.Error(), "retry: ")}}}
	}
	return nil
}

// defaultDashboard sets the dashboard to one showing the gateway's local
// breakers and their last 100 transitions, fed through OnTransition (which
// still calls the caller's hook).
func (g *Gateway) defaultDashboard() {
	log := dashboard.NewLog(100)
	hook := g.opt.OnTransition
	g.opt.OnTransition = func(model string, t fallback.Transition) {
		log.ModelHook(model)(t)
		if hook != nil {
			hook(model, t)
		}
	}
	g.opt.Dashboard = dashboard.New(func() dashboard.Sources {
		var src dashboard.Sources
		cur := g.latest()
		for _, b := range cur.LocalBreakers() {
			src.Models = append(src.Models, dashboard.Model{Name: b.Name, Manager: b.Manager, Settings: b.Settings,
				Pools: cur.dashboardPools(b.Name)})
		}
		return src
	}, dashboard.Options{Title: "loopctl gateway", Log: log})
}

// addModels builds the route of every configured model, in config order.
func (g *Gateway) addModels(models []Model) error {
	for i, m := range models {
		rt, err := g.newRoute(m)
		if err != nil {
			return &ConfigError{Problems: []Problem{{Path: fmt.Sprintf("models[%d]", i), Message: err.Error()}}}
		}
		g.models[m.Name] = rt
		g.order = append(g.order, rt)
		g.configuredTargets(rt)
	}
	return nil
}

// upstreamTransport returns the upstream transport: rt, or for nil the
// default transport (which Close closes). Redirects are never followed:
// the gateway calls RoundTrip itself.
func upstreamTransport(rt http.RoundTripper) transport {
	if rt == nil {
		own := newTransport()
		return transport{rt: own, own: own}
	}
	return transport{rt: rt}
}

// orDefault is v, or def when v is zero.
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
func (g *Gateway) newRoute(m Model) (*route, error) { return g.buildRoute(m, nil) }

// buildRoute builds the route of model m: with a new breaker, or with the
// breaker of keep (a route of the gateway being reloaded, with the same
// primary and chain) reconfigured with m's settings.
func (g *Gateway) buildRoute(m Model, keep *route) (*route, error) {
	s := g.breakerSettings(m)
	rt := &route{name: m.Name, targets: map[string]*target{}, settings: s}
	if keep != nil {
		rt.settings.Backend = keep.settings.Backend // the same shared breaker
		rt.mgr, rt.notes, rt.poolHedges = keep.mgr, keep.notes, keep.poolHedges
		if err := rt.mgr.Reconfigure(rt.settings); err != nil { // state, holds and disables kept
			return nil, err
		}
	} else if err := g.buildBreaker(rt, s); err != nil {
		return nil, err
	}
	if rt.poolHedges == nil {
		rt.poolHedges = newPoolHedges(s)
	}
	rt.budget = attemptBudget(m)
	for _, ref := range append([]string{m.Primary}, m.Chain...) {
		tg := g.entryTarget(ref)
		rt.targets[ref] = tg
		rt.openai = rt.openai || tg.speaksOpenAI()
	}
	rt.refusals = m.OnRefusal == "fallback"
	rt.policy = g.retries.policy
	rt.noRetry = g.retries.budget.Budget == RetryBudgetNone
	rt.policy.OnRetry = g.m.breakers.RetryHook(m.Name, metrics.Model)
	return rt, nil
}

// breakerSettings composes the settings of model m's breaker from its
// config, the gateway's clock and Options.Backend; OnTransition is left
// for buildBreaker.
func (g *Gateway) breakerSettings(m Model) fallback.Settings {
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
		FailureRate:             b.FailureRate,
		RateWindow:              b.RateWindow,
		RateMinCalls:            b.RateMinCalls,
		SlowCallAfter:           b.SlowCallAfter,
		SlowCallRate:            b.SlowCallRate,
		RecoveryBackoff:         b.RecoveryBackoff,
		MaxRecoveryTimeout:      b.MaxRecoveryTimeout,
		RetryBudget:             retryFeed(g.retries.budget),
		RetryBudgetBurst:        g.retries.budget.BudgetBurst,
		Now:                     g.opt.Now,
	}
	if g.opt.Backend != nil {
		s.Backend = g.opt.Backend(storeNameIn(m, g.cfg.Pools))
	}
	return s
}

// buildBreaker creates rt's breaker from s, its transitions counted in the
// metrics and passed to Options.OnTransition, registered with the
// metrics.
func (g *Gateway) buildBreaker(rt *route, s fallback.Settings) error {
	on, notes := g.transitions(rt.name), &routeNotes{}
	s.OnTransition = func(t fallback.Transition) { notes.since.Store(t.At.UnixNano()); on(notes.stamp(t)) }
	rt.notes = notes
	var err error
	if rt.mgr, err = fallback.New(s); err != nil {
		return err
	}
	// A gateway a reload replaced may have registered an upstream/model name
	// after the reload took its routes over: the new breaker is the one shown.
	g.m.breakers.RemoveManager(rt.name)
	return g.m.breakers.AddManager(rt.name, rt.mgr)
}

// transitions is the OnTransition of model name's breaker: counted in the
// metrics, then passed to Options.OnTransition.
func (g *Gateway) transitions(name string) func(fallback.Transition) {
	count := g.m.breakers.ModelTransitions(name)
	hook := g.opt.OnTransition
	if hook == nil {
		return count
	}
	return func(t fallback.Transition) {
		count(t)
		hook(name, t)
	}
}

// attemptBudget is how many attempts a request to model m may make:
// attempts, or else enough to walk the chain once: the primary's trip
// threshold plus one and each chain entry's max_fail_count (zero: package
// fallback's defaults, as its breaker will have them).
func attemptBudget(m Model) int {
	if m.Attempts != 0 {
		return m.Attempts
	}
	b := m.Breaker
	budget := max(cmp.Or(b.TripThreshold, fallback.DefaultTripThreshold), 0) + 1
	per := cmp.Or(b.MaxFailCount, fallback.DefaultMaxFailCount)
	return budget + per*len(m.Chain)
}
