package gateway

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/loopctl/loopctl-go/retry"
)

// Validate checks the configuration and returns a [*ConfigError] naming
// every problem by its YAML key path, or nil. It does not read the
// environment (see [New] for the keys).
func (c Config) Validate() error {
	var ps problems
	if c.Listen != "" {
		if _, port, err := net.SplitHostPort(c.Listen); err != nil {
			ps.add("listen", "%q is not host:port", c.Listen)
		} else if _, err := net.LookupPort("tcp", port); err != nil {
			ps.add("listen", "%q: the port must be a number from 0 to 65535", c.Listen)
		}
	}
	ps.keys("client_keys", c.ClientKeys)
	ps.keys("admin_keys", c.AdminKeys)
	ups := map[string]int{}
	apis := map[string]string{} // upstream name -> its wire
	for i, u := range c.Upstreams {
		p := fmt.Sprintf("upstreams[%d]", i)
		ps.name(p, "upstreams", u.Name, "", ups, i)
		apis[u.Name] = u.API
		switch u.API {
		case "", APIOpenAI:
			apis[u.Name] = APIOpenAI
		case APIAnthropic:
			if strings.HasSuffix(strings.TrimRight(u.BaseURL, "/"), "/v1") {
				ps.add(p+".base_url", "%q: an anthropic upstream's base_url is the host (the gateway appends /v1/messages)", u.BaseURL)
			}
		default:
			ps.add(p+".api", "%q is not openai or anthropic", u.API)
		}
		if u.BaseURL == "" {
			ps.add(p+".base_url", "required")
		} else if pu, err := url.Parse(u.BaseURL); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			ps.add(p+".base_url", "%q is not an http:// or https:// URL", redactQuery(u.BaseURL))
		} else if pu.RawQuery != "" || pu.ForceQuery || pu.Fragment != "" || pu.User != nil {
			ps.add(p+".base_url", "%q must not have a query string, fragment or credentials (keys go in api_key_env)", redactQuery(u.BaseURL))
		}
	}
	if len(c.Models) == 0 {
		ps.add("models", "at least one model is required")
	}
	models := map[string]int{}
	for i, m := range c.Models {
		p := fmt.Sprintf("models[%d]", i)
		ps.name(p, "models", m.Name, " (that form addresses an upstream model directly)", models, i)
		seen := map[string]string{}
		check := func(path, ref string) {
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
			if _, known := ups[up]; !known {
				ps.add(path, "unknown upstream %q", up)
			}
			if prev, dup := seen[ref]; dup {
				ps.add(path, "%q duplicates %s", ref, prev)
			}
			seen[ref] = path
		}
		check(p+".primary", m.Primary)
		primaryUp, _, _ := strings.Cut(m.Primary, "/")
		for j, e := range m.Chain {
			path := fmt.Sprintf("%s.chain[%d]", p, j)
			check(path, e)
			// Every chain entry speaks the primary's wire (§6).
			up, _, _ := strings.Cut(e, "/")
			if a, b := apis[primaryUp], apis[up]; a != "" && b != "" && a != b {
				ps.add(path, "%q is on the %s wire, the primary %q on %s (a chain stays on one wire)", e, b, m.Primary, a)
			}
		}
		b := m.Breaker
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
				ps.add(p+".breaker."+f.key, "must not be negative")
			}
		}
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
	if c.Retry.BaseDelay < 0 {
		ps.add("retry.base_delay", "must not be negative")
	}
	if c.Retry.MaxDelay < 0 {
		ps.add("retry.max_delay", "must not be negative")
	}
	if b, m := orDefault(c.Retry.BaseDelay, retry.DefaultBaseDelay), orDefault(c.Retry.MaxDelay, retry.DefaultMaxDelay); c.Retry.BaseDelay >= 0 && c.Retry.MaxDelay >= 0 && b > m {
		ps.add("retry.base_delay", "%v must not exceed retry.max_delay (%v)", b, m)
	}
	if c.Timeouts.Total < 0 {
		ps.add("timeouts.total", "must not be negative")
	}
	if c.Timeouts.Idle < 0 {
		ps.add("timeouts.idle", "must not be negative")
	}
	if c.Limits.MaxResponse < 0 {
		ps.add("limits.max_response", "must not be negative")
	}
	if c.Limits.MaxDirect < NoDirect {
		ps.add("limits.max_direct", "must not be negative")
	}
	if c.Timeouts.Request < 0 {
		ps.add("timeouts.request", "must not be negative")
	}
	if c.Timeouts.FirstByte < 0 {
		ps.add("timeouts.first_byte", "must not be negative")
	}
	if c.Limits.MaxBody < 0 {
		ps.add("limits.max_body", "must not be negative")
	}
	if c.Store.Redis != "" {
		if u, err := url.Parse(c.Store.Redis); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
			ps.add("store.redis", "%q is not a redis:// or rediss:// URL", redact(c.Store.Redis))
		}
	}
	return ps.err()
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
		if k.Key == "" && k.KeyEnv == "" {
			ps.add(p+".key_env", "required (the environment variable holding the key)")
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
	return "(not a URL)"
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
