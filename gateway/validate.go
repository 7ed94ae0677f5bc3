package gateway

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/loopctl/loopctl-go/retry"
)

// Validate checks the configuration and returns a [*ConfigError] naming
// every problem by its YAML key path, or nil. It does not read the
// environment (see [New] for the keys).
func (c Config) Validate() error {
	var ps problems
	ps.listen(c.Listen)
	ps.keys("client_keys", c.ClientKeys)
	ps.keys("admin_keys", c.AdminKeys)
	ups := ps.upstreams(c.Upstreams)
	pools := ps.pools(c.Pools, ups)
	ps.models(c.Models, ups, pools)
	ps.retry(c.Retry)
	ps.retryBudget(c.Retry)
	ps.bounds(c.Timeouts, c.Limits)
	ps.store(c.Store)
	return ps.err()
}

// listen checks the listen address: empty, or host:port with a port from 0
// to 65535.
func (ps *problems) listen(addr string) {
	if addr == "" {
		return
	}
	if _, port, err := net.SplitHostPort(addr); err != nil {
		ps.add("listen", "%q is not host:port", addr)
	} else if _, err := net.LookupPort("tcp", port); err != nil {
		ps.add("listen", "%q: the port must be a number from 0 to 65535", addr)
	}
}

// upstreams checks the upstreams list and returns the index of each
// upstream name.
func (ps *problems) upstreams(list []Upstream) map[string]int {
	ups := map[string]int{}
	for i, u := range list {
		p := fmt.Sprintf("upstreams[%d]", i)
		ps.name(p, "upstreams", u.Name, "", ups, i)
		ps.reservedUpstream(p, u.Name)
		ps.upstreamAPI(p, u)
		if u.BaseURL != "" || newCloud(u) == nil { // Bedrock's and Vertex's default from their region
			ps.baseURL(p+".base_url", u.BaseURL)
		}
		ps.translation(p, u)
		if u.APIKeyEnv != "" && u.APIKeyFile != "" {
			ps.add(p+".api_key_file", "api_key_env and api_key_file are two sources of one key: give one")
		}
		ps.authProblems(p, u)
		ps.azureProblems(p, u)
	}
	return ups
}

// upstreamAPI checks the wire of upstream u (at path p).
func (ps *problems) upstreamAPI(p string, u Upstream) {
	switch u.API {
	case "", APIOpenAI, APIBedrock, APIVertex:
	case APIAnthropic:
		if strings.HasSuffix(strings.TrimRight(u.BaseURL, "/"), "/v1") {
			ps.add(p+".base_url", "%q: an anthropic upstream's base_url is the host (the gateway appends /v1/messages)", u.BaseURL)
		}
	default:
		ps.add(p+".api", "%q is not openai, anthropic, bedrock or vertex", u.API)
	}
}

// translation checks upstream u's keys for translated traffic (at path p):
// wires, translate and default_max_tokens, each only where its api has it.
func (ps *problems) translation(p string, u Upstream) {
	if u.API == APIAnthropic || newCloud(u) != nil {
		if u.Wires != nil {
			ps.add(p+".wires", "an anthropic upstream serves the messages wire only (wires is for openai upstreams)")
		}
		if u.Translate != (Translate{}) {
			ps.add(p+".translate", "is for openai upstreams (an anthropic upstream gets every translated request on messages)")
		}
		return
	}
	if u.DefaultMaxTokens != 0 {
		ps.add(p+".default_max_tokens", "is for anthropic upstreams (Messages requires max_tokens)")
	}
	seen := map[string]bool{}
	for i, w := range u.Wires {
		if w != "chat" && w != "responses" {
			ps.add(fmt.Sprintf("%s.wires[%d]", p, i), "%q is not chat or responses", w)
		} else if seen[w] {
			ps.add(fmt.Sprintf("%s.wires[%d]", p, i), "%q is listed twice", w)
		}
		seen[w] = true
	}
	if u.Wires != nil && len(u.Wires) == 0 {
		ps.add(p+".wires", "must list chat, responses or both")
	}
	switch t := u.Translate; {
	case t.To != "" && t.To != "chat" && t.To != "responses":
		ps.add(p+".translate.to", "%q is not chat or responses", t.To)
	case t.To != "" && u.Wires != nil && !seen[t.To]:
		ps.add(p+".translate.to", "%q is not one of the upstream's wires %v", t.To, u.Wires)
	}
	if f := u.Translate.MaxTokensField; f != "" && f != "max_tokens" && f != "max_completion_tokens" {
		ps.add(p+".translate.max_tokens_field", "%q is not max_tokens or max_completion_tokens", f)
	}
}

// baseURL checks an upstream's base_url (at path): required, http or https,
// with a host and without query string, fragment or credentials.
func (ps *problems) baseURL(path, s string) {
	if s == "" {
		ps.add(path, "required")
	} else if pu, err := url.Parse(s); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		ps.add(path, "%q is not an http:// or https:// URL", redactQuery(s))
	} else if p, _ := strconv.Atoi(pu.Port()); p > 65535 {
		ps.add(path, "%q: port %s is above 65535", redactQuery(s), pu.Port())
	} else if pu.Query().Has("api-version") {
		ps.add(path, "%q: Azure's api-version goes in the upstream's api_version (with base_url the resource's, such as https://my-resource.openai.azure.com), not in the URL", redactQuery(s))
	} else if pu.RawQuery != "" || pu.ForceQuery || pu.Fragment != "" || pu.User != nil {
		ps.add(path, "%q must not have a query string, fragment or credentials (keys go in api_key_env)", redactQuery(s))
	}
}

// models checks the models list against the upstreams (ups: their names)
// and the pools.
func (ps *problems) models(list []Model, ups map[string]int, pools poolIndex) {
	if len(list) == 0 {
		ps.add("models", "at least one model is required")
	}
	names := map[string]int{}
	for i, m := range list {
		p := fmt.Sprintf("models[%d]", i)
		ps.name(p, "models", m.Name, " (that form addresses an upstream model directly)", names, i)
		ps.chain(p, m, ups, pools)
		ps.poolAndMember(p, m, pools)
		ps.breaker(p+".breaker", m.Breaker)
		ps.windowRules(p+".breaker", m.Breaker)
		ps.backoff(p+".breaker", m.Breaker)
		ps.hedgeAndAttempts(p, m)
	}
}

// chain checks model m's primary and chain entries (m at path p): each a
// reference to a known upstream or pool, none repeated. A chain may mix
// wires: a request reaches an entry on another wire translated (§8.1).
func (ps *problems) chain(p string, m Model, ups map[string]int, pools poolIndex) {
	seen := map[string]string{}
	ps.ref(p+".primary", m.Primary, ups, pools, seen)
	for j, e := range m.Chain {
		ps.ref(fmt.Sprintf("%s.chain[%d]", p, j), e, ups, pools, seen)
	}
	switch m.OnRefusal {
	case "", "pass", "fallback":
	default:
		ps.add(p+".on_refusal", "%q is not pass or fallback", m.OnRefusal)
	}
}

// ref checks one upstream/model or pool/<name> reference (at path): well
// formed, naming a known upstream (ups) or pool, and not a duplicate of an
// earlier reference of the same model; seen maps the references checked so
// far to their path.
func (ps *problems) ref(path, ref string, ups map[string]int, pools poolIndex, seen map[string]string) {
	up, model, ok := strings.Cut(ref, "/")
	switch {
	case ref == "":
		ps.add(path, "required (upstream/model)")
		return
	case !ok || up == "" || model == "":
		ps.add(path, "%q is not upstream/model", ref)
		return
	case !validModelName(ref):
		ps.add(path, "must be at most %d bytes of printable text", MaxModelName)
		return
	}
	if up == poolUpstream {
		ps.poolRef(path, model, pools)
	} else if _, known := ups[up]; !known {
		ps.add(path, "unknown upstream %q", up)
	}
	if prev, dup := seen[ref]; dup {
		ps.add(path, "%q duplicates %s", ref, prev)
	}
	seen[ref] = path
}

// breaker checks a model's breaker settings (at path p): none negative.
func (ps *problems) breaker(p string, b Breaker) {
	for _, f := range []struct {
		key string
		neg bool
	}{
		{"trip_threshold", b.TripThreshold < 0},
		{"recovery_timeout", b.RecoveryTimeout < 0},
		{"recovery_successes", b.RecoverySuccesses < 0},
		{"max_fail_count", b.MaxFailCount < 0},
		{"probe_timeout", b.ProbeTimeout < 0},
		{"quota_cooldown", b.QuotaCooldown < 0},
	} {
		if f.neg {
			ps.add(p+"."+f.key, "must not be negative")
		}
	}
}

// hedgeAndAttempts checks model m's hedge_after, hedge_budget and attempts
// (m at path p).
func (ps *problems) hedgeAndAttempts(p string, m Model) {
	if m.HedgeAfter < 0 {
		ps.add(p+".hedge_after", "must not be negative")
	}
	if m.HedgeBudget < 0 || m.HedgeBudget != m.HedgeBudget {
		ps.add(p+".hedge_budget", "must be a number above zero")
	}
	if m.Attempts < 0 {
		ps.add(p+".attempts", "must not be negative")
	}
}

// retry checks the retry ladder: delays not negative, and the base delay
// (or its default) not above the max delay (or its default).
func (ps *problems) retry(r Retry) {
	if r.BaseDelay < 0 {
		ps.add("retry.base_delay", "must not be negative")
	}
	if r.MaxDelay < 0 {
		ps.add("retry.max_delay", "must not be negative")
	}
	if b, m := orDefault(r.BaseDelay, retry.DefaultBaseDelay), orDefault(r.MaxDelay, retry.DefaultMaxDelay); r.BaseDelay >= 0 && r.MaxDelay >= 0 && b > m {
		ps.add("retry.base_delay", "%v must not exceed retry.max_delay (%v)", b, m)
	}
}

// bounds checks the timeouts and limits: none negative (max_direct may be
// [NoDirect]). The order of the checks is the order problems are reported in.
func (ps *problems) bounds(t Timeouts, l Limits) {
	for _, b := range [...]struct {
		key      string
		negative bool
	}{
		{"timeouts.total", t.Total < 0},
		{"timeouts.idle", t.Idle < 0},
		{"limits.max_response", l.MaxResponse < 0},
		{"limits.max_direct", l.MaxDirect < NoDirect},
		{"timeouts.request", t.Request < 0},
		{"timeouts.first_byte", t.FirstByte < 0},
		{"limits.max_body", l.MaxBody < 0},
	} {
		if b.negative {
			ps.add(b.key, "must not be negative")
		}
	}
}

// store checks the shared store: empty, or a redis:// or rediss:// URL.
func (ps *problems) store(s Store) {
	if s.Redis == "" {
		return
	}
	if u, err := url.Parse(s.Redis); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		ps.add("store.redis", "%q is not a redis:// or rediss:// URL", redact(s.Redis))
	}
}

// keys checks a list of client or admin keys.
func (ps *problems) keys(list string, keys []ClientKey) {
	names := map[string]int{}
	for i, k := range keys {
		p := fmt.Sprintf("%s[%d]", list, i)
		if k.Name == "" {
			ps.add(p+".name", "required")
		} else if j, dup := names[k.Name]; dup {
			ps.add(p+".name", "%q duplicates %s[%d]", k.Name, list, j)
		} else {
			names[k.Name] = i
		}
		switch {
		case k.Key == "" && k.KeyEnv == "" && k.KeyFile == "":
			ps.add(p+".key_env", "required (the environment variable holding the key), or key_file")
		case k.KeyEnv != "" && k.KeyFile != "":
			ps.add(p+".key_file", "key_env and key_file are two sources of one key: give one")
		}
	}
}

// redactQuery hides a URL's query string and password.
func redactQuery(s string) string {
	if u, err := url.Parse(s); err == nil {
		if u.RawQuery != "" {
			u.RawQuery = "xxxxx"
		}
		return redact(u.String())
	}
	return redactRaw(s)
}

// redactRaw is s, a URL that does not parse, as a problem may show it:
// the query string and any credentials before an "@" of its host part
// hidden, so that the person fixing it sees what they wrote.
func redactRaw(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i+1] + "xxxxx"
	}
	start := 0
	if i := strings.Index(s, "://"); i >= 0 {
		start = i + 3
	}
	end := len(s)
	if i := strings.IndexAny(s[start:], "/?#"); i >= 0 {
		end = start + i
	}
	if at := strings.LastIndex(s[start:end], "@"); at >= 0 {
		s = s[:start] + "xxxxx" + s[start+at:]
	}
	return s
}

// redact hides a URL's password.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
			return u.String()
		}
	}
	return s
}

// name checks the name of entry i of list (at path p): required, without
// "/" (why, if not empty, says what that form means), and not a duplicate of
// an earlier entry; seen maps the names checked so far to their index.
func (ps *problems) name(p, list, name, why string, seen map[string]int, i int) {
	switch {
	case name == "":
		ps.add(p+".name", "required")
	case strings.Contains(name, "/"):
		ps.add(p+".name", "%q must not contain \"/\"%s", name, why)
	default:
		if j, dup := seen[name]; dup {
			ps.add(p+".name", "%q duplicates %s[%d]", name, list, j)
		} else {
			seen[name] = i
		}
	}
}
