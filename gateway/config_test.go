package gateway

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

const specConfig = `
listen: 127.0.0.1:4000
client_keys:
  - name: team-a
    key_env: LOOPCTL_KEY_TEAM_A
upstreams:
  - name: openai
    base_url: https://api.openai.com/v1
    api_key_env: OPENAI_API_KEY
  - name: local
    base_url: http://127.0.0.1:8000/v1
models:
  - name: smart
    primary: openai/gpt-5
    chain: [local/llama-3.1-8b]
    breaker:
      trip_threshold: 3
      recovery_timeout: 60s
      recovery_successes: 2
      max_fail_count: 2
      probe_timeout: 5m
retry:
  max_retries: 3
  base_delay: 100ms
  max_delay: 10s
timeouts:
  request: 10m
  first_byte: 60s
limits:
  max_body: 10MiB
store:
  redis: redis://127.0.0.1:6379/0
  prefix: loopctl
`

// The example of docs/GATEWAY.md §2 parses to what it says.
func TestParseSpecConfig(t *testing.T) {
	c, err := ParseConfig([]byte(specConfig))
	if err != nil {
		t.Fatal(err)
	}
	m := c.Models[0]
	switch {
	case c.Listen != "127.0.0.1:4000", c.ClientKeys[0] != (ClientKey{Name: "team-a", KeyEnv: "LOOPCTL_KEY_TEAM_A"}),
		!reflect.DeepEqual(c.Upstreams[1], Upstream{Name: "local", BaseURL: "http://127.0.0.1:8000/v1"}),
		m.Name != "smart" || m.Primary != "openai/gpt-5" || len(m.Chain) != 1 || m.Chain[0] != "local/llama-3.1-8b",
		m.Breaker != (Breaker{TripThreshold: 3, RecoveryTimeout: time.Minute, RecoverySuccesses: 2, MaxFailCount: 2, ProbeTimeout: 5 * time.Minute}),
		c.Retry != (Retry{MaxRetries: 3, BaseDelay: 100 * time.Millisecond, MaxDelay: 10 * time.Second}),
		c.Timeouts != (Timeouts{Request: 10 * time.Minute, FirstByte: time.Minute}),
		c.Limits.MaxBody != 10<<20, c.Store != (Store{Redis: "redis://127.0.0.1:6379/0", Prefix: "loopctl"}):
		t.Fatalf("parsed %+v", c)
	}
}

// Every problem is named by its key path, all at once.
func TestConfigProblems(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"not yaml", "models: [", []string{"not valid YAML"}},
		{"empty", "", []string{"models: at least one model is required"}},
		{"unknown keys", "modles: []\nmodels: [{name: m, primary: u/x, fallback: []}]\nupstreams: [{name: u, base_url: 'http://h'}]", []string{
			"modles: unknown key", "models[0].fallback: unknown key"}},
		{"translation keys", `
upstreams:
  - {name: o, base_url: 'https://x/v1', wires: [chat, chat, soap], translate: {to: messages, max_tokens_field: max_len, stream_usage: maybe}, default_max_tokens: 10}
  - {name: l, base_url: 'https://l/v1', wires: [chat], translate: {to: responses}}
  - {name: an, api: anthropic, base_url: 'https://y', wires: [chat], translate: {to: chat}, default_max_tokens: -1}
models: [{name: a, primary: o/m, chain: [an/c, l/d], on_refusal: retry}]
`, []string{
			`upstreams[0].translate.stream_usage: "maybe" is not true or false`,
			`upstreams[2].default_max_tokens: must be at least 1`,
			`upstreams[0].default_max_tokens: is for anthropic upstreams (Messages requires max_tokens)`,
			`upstreams[0].wires[1]: "chat" is listed twice`,
			`upstreams[0].wires[2]: "soap" is not chat or responses`,
			`upstreams[0].translate.to: "messages" is not chat or responses`,
			`upstreams[0].translate.max_tokens_field: "max_len" is not max_tokens or max_completion_tokens`,
			`upstreams[1].translate.to: "responses" is not one of the upstream's wires [chat]`,
			`upstreams[2].wires: an anthropic upstream serves the messages wire only (wires is for openai upstreams)`,
			`upstreams[2].translate: is for openai upstreams (an anthropic upstream gets every translated request on messages)`,
			`models[0].on_refusal: "retry" is not pass or fallback`}},
		{"bad api, anthropic base_url with /v1", "upstreams: [{name: o, api: gemini, base_url: 'https://x/v1'}, {name: an, api: anthropic, base_url: 'https://y/v1'}]\nmodels: [{name: a, primary: o/m}]", []string{
			`upstreams[0].api: "gemini" is not openai, anthropic, bedrock or vertex`,
			`upstreams[1].base_url: "https://y/v1": an anthropic upstream's base_url is the host (the gateway appends /v1/messages)`}},
		{"unknown upstream", "upstreams: [{name: anthropic, base_url: 'https://x'}]\nmodels: [{name: a, primary: anthropic/c}, {name: b, primary: anthropic/c, chain: [anthropc/h, anthropic/c]}]", []string{
			`models[1].chain[0]: unknown upstream "anthropc"`, `models[1].chain[1]: "anthropic/c" duplicates models[1].primary`}},
		{"bad values", `
listen: nowhere
client_keys: [{name: k}, {name: k, key_env: E}]
upstreams: [{name: "a/b", base_url: x}, {base_url: "http://h"}]
models: [{name: "x/y", primary: nope}, {name: m, primary: a/x, attempts: -1, breaker: {max_fail_count: two}}, {name: m, primary: ""}]
retry: {base_delay: -1s}
timeouts: {request: forever, first_byte: -1s}
limits: {max_body: 1.5MiB}
store: {redis: "localhost:6379"}
`, []string{
			`listen: "nowhere" is not host:port`,
			"client_keys[0].key_env: required",
			`client_keys[1].name: "k" duplicates client_keys[0]`,
			`upstreams[0].name: "a/b" must not contain "/"`,
			`upstreams[0].base_url: "x" is not an http:// or https:// URL`,
			"upstreams[1].name: required",
			`models[0].name: "x/y" must not contain "/"`,
			`models[0].primary: "nope" is not upstream/model`,
			`models[1].attempts: must be at least 1`,
			`models[1].breaker.max_fail_count: "two" is not a whole number`,
			`models[2].name: "m" duplicates models[1]`,
			"models[2].primary: required",
			"retry.base_delay: must be above zero",
			`timeouts.request: "forever" is not a duration`,
			"timeouts.first_byte: must be above zero",
			`limits.max_body: "1.5MiB" is not a size`,
			`store.redis: "localhost:6379" is not a redis:// or rediss:// URL`,
		}},
		{"rev 4 keys", `
upstreams: [{name: u, base_url: 'http://h/v1'}]
models:
  - {name: a, primary: u/x, breaker: {failure_rate: 1.5, rate_window: 0s, rate_min_calls: 0, slow_call_rate: 0.5}}
  - {name: b, primary: u/y, breaker: {failure_rate: 0, slow_call_after: soon}}
  - {name: c, primary: u/z, breaker: {slow_call_after: 1s}}
retry: {budget: -1, budget_burst: 0}
`, []string{
			`models[0].breaker.failure_rate: "1.5" is not a share above 0 and at most 1`,
			`models[0].breaker.rate_window: must be above zero`,
			`models[0].breaker.rate_min_calls: must be at least 1`,
			`models[0].breaker.slow_call_rate: needs slow_call_after`,
			`models[1].breaker.failure_rate: "0" is not a share above 0 and at most 1`,
			`models[1].breaker.slow_call_after: "soon" is not a duration`,
			`retry.budget: "-1" is not a number of at least 0 or off`,
			`retry.budget_burst: "0" is not a number above zero`}},
		{"wrong shapes", "models: {name: m}\nupstreams: [x]\nretry: 3", []string{"models: must be a list", "upstreams[0]: must be a mapping", "retry: must be a mapping"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *ConfigError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("lacks %q:\n%s", w, err)
				}
			}
		})
	}
}

func TestNewReadsKeysFromTheEnvironment(t *testing.T) {
	c, err := ParseConfig([]byte(specConfig))
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(c, Options{Getenv: func(string) string { return "" }})
	for _, w := range []string{"client_keys[0].key_env: environment variable LOOPCTL_KEY_TEAM_A is not set", "upstreams[0].api_key_env: environment variable OPENAI_API_KEY is not set"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error %v lacks %q", err, w)
		}
	}
	env := map[string]string{"LOOPCTL_KEY_TEAM_A": "sk-team", "OPENAI_API_KEY": "sk-up"}
	g, err := New(c, Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "512": 512, "1KiB": 1024, "10MiB": 10 << 20, "2 GiB": 2 << 30, "7B": 7} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5MiB", "10MB", "MiB", "99999999999GiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q): no error", in)
		}
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(specConfig))
	f.Add([]byte("models: [{name: m, primary: u/x}]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseConfig(b)
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("parsed without error but invalid: %v", verr)
			}
		}
	})
}
