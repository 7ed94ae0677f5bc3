package gateway

import "go.yaml.in/yaml/v3"

// config decodes the top-level mapping n into c, one decoder per section.
func (d decoder) config(n *yaml.Node, c *Config) {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	d.fields("", n, map[string]func(string, *yaml.Node){
		"listen":      d.text(&c.Listen),
		"client_keys": d.keys(&c.ClientKeys),
		"admin_keys":  d.keys(&c.AdminKeys),
		"upstreams":   d.upstreams(&c.Upstreams),
		"models":      d.models(&c.Models),
		"pools":       d.pools(&c.Pools),
		"retry":       d.retry(&c.Retry),
		"timeouts":    d.timeouts(&c.Timeouts),
		"limits":      d.limits(&c.Limits),
		"store":       d.store(&c.Store),
	})
}

// keys decodes a list of client or admin keys, appending each to dst.
func (d decoder) keys(dst *[]ClientKey) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.seq(p, v, func(p string, v *yaml.Node) {
			var k ClientKey
			d.fields(p, v, map[string]func(string, *yaml.Node){
				"name":     d.str(&k.Name),
				"key_env":  d.str(&k.KeyEnv),
				"key_file": d.text(&k.KeyFile),
			})
			*dst = append(*dst, k)
		})
	}
}

// upstreams decodes the upstreams list, appending each to dst.
func (d decoder) upstreams(dst *[]Upstream) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.seq(p, v, func(p string, v *yaml.Node) {
			var u Upstream
			d.fields(p, v, map[string]func(string, *yaml.Node){
				"name":               d.str(&u.Name),
				"api":                d.str(&u.API),
				"base_url":           d.str(&u.BaseURL),
				"api_key_env":        d.text(&u.APIKeyEnv),
				"api_key_file":       d.text(&u.APIKeyFile),
				"wires":              d.chain(&u.Wires),
				"translate":          d.translate(&u.Translate),
				"default_max_tokens": d.count(&u.DefaultMaxTokens),
				"auth":               d.auth(&u.Auth),
				"region":             d.str(&u.Region),
				"project":            d.str(&u.Project),
				"api_version":        d.str(&u.APIVersion),
			})
			*dst = append(*dst, u)
		})
	}
}

// models decodes the models list, appending each to dst.
func (d decoder) models(dst *[]Model) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.seq(p, v, func(p string, v *yaml.Node) {
			var m Model
			d.fields(p, v, map[string]func(string, *yaml.Node){
				"name":         d.str(&m.Name),
				"primary":      d.str(&m.Primary),
				"attempts":     d.count(&m.Attempts),
				"hedge_after":  d.positive(&m.HedgeAfter),
				"hedge_budget": d.positiveFloat(&m.HedgeBudget),
				"chain":        d.chain(&m.Chain),
				"breaker":      d.breaker(&m.Breaker),
				"on_refusal":   d.str(&m.OnRefusal),
			})
			*dst = append(*dst, m)
		})
	}
}

// chain decodes a list of strings (a model's chain of upstream/model
// references, an upstream's wires), appending each to dst.
func (d decoder) chain(dst *[]string) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.seq(p, v, func(p string, v *yaml.Node) {
			var s string
			d.str(&s)(p, v)
			*dst = append(*dst, s)
		})
	}
}

// breaker decodes a model's breaker section into b.
func (d decoder) breaker(b *Breaker) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) { d.fields(p, v, d.breakerKeys(b)) }
}

// breakerKeys are the keys of a model's breaker section, each stored in b
// (a pool's breaker section takes all but two of them).
func (d decoder) breakerKeys(b *Breaker) map[string]func(string, *yaml.Node) {
	return map[string]func(string, *yaml.Node){
		"trip_threshold":       d.count(&b.TripThreshold),
		"recovery_timeout":     d.positive(&b.RecoveryTimeout),
		"recovery_successes":   d.count(&b.RecoverySuccesses),
		"max_fail_count":       d.count(&b.MaxFailCount),
		"probe_timeout":        d.positive(&b.ProbeTimeout),
		"quota_cooldown":       d.positive(&b.QuotaCooldown),
		"failure_rate":         d.rate(&b.FailureRate),
		"rate_window":          d.positive(&b.RateWindow),
		"rate_min_calls":       d.count(&b.RateMinCalls),
		"slow_call_after":      d.positive(&b.SlowCallAfter),
		"slow_call_rate":       d.rate(&b.SlowCallRate),
		"recovery_backoff":     d.factor(&b.RecoveryBackoff),
		"max_recovery_timeout": d.positive(&b.MaxRecoveryTimeout),
	}
}

// retry decodes the retry section into r.
func (d decoder) retry(r *Retry) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.fields(p, v, map[string]func(string, *yaml.Node){
			"max_retries":        d.zeroMeans(&r.MaxRetries, -1, "no retries"),
			"base_delay":         d.positive(&r.BaseDelay),
			"max_delay":          d.positive(&r.MaxDelay),
			"rate_limit_retries": d.zeroMeans(&r.RateLimitRetries, -1, "no rate-limit waits"),
			"rate_limit_wait":    d.zeroMeansDuration(&r.RateLimitWait, -1, "never wait out a rate limit"),
			"budget":             d.budget(&r.Budget),
			"budget_burst":       d.positiveFloat(&r.BudgetBurst),
		})
	}
}

// timeouts decodes the timeouts section into t.
func (d decoder) timeouts(t *Timeouts) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.fields(p, v, map[string]func(string, *yaml.Node){
			"request":    d.positive(&t.Request),
			"total":      d.positive(&t.Total),
			"first_byte": d.positive(&t.FirstByte),
			"idle":       d.positive(&t.Idle),
		})
	}
}

// limits decodes the limits section into l.
func (d decoder) limits(l *Limits) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.fields(p, v, map[string]func(string, *yaml.Node){
			"max_body":     d.positiveSize(&l.MaxBody),
			"max_response": d.positiveSize(&l.MaxResponse),
			"max_direct":   d.zeroMeans(&l.MaxDirect, NoDirect, "no direct upstream/model names"),
		})
	}
}

// store decodes the store section into s.
func (d decoder) store(s *Store) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.fields(p, v, map[string]func(string, *yaml.Node){
			"redis":    d.text(&s.Redis),
			"prefix":   d.text(&s.Prefix),
			"required": d.boolean(&s.Required),
		})
	}
}

// translate decodes an upstream's translate section.
func (d decoder) translate(t *Translate) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		usage := true
		d.fields(p, v, map[string]func(string, *yaml.Node){
			"to":               d.str(&t.To),
			"max_tokens_field": d.str(&t.MaxTokensField),
			"stream_usage":     d.boolean(&usage),
		})
		t.NoStreamUsage = !usage
	}
}
