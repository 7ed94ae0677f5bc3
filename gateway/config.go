package gateway

import (
	"fmt"
	"os"
	"time"
)

// Config is the gateway's configuration: what `loopctl serve --config` reads
// from YAML (see [ParseConfig]) and what a Go program builds to mount the
// gateway itself. The zero value of every optional field means its default,
// as documented on the field.
type Config struct {
	// Listen is the address `loopctl serve` listens on. "": 127.0.0.1:4000.
	// The Handler itself does not listen.
	Listen string
	// ClientKeys are the keys clients must present as "Authorization: Bearer
	// <key>" (or "x-api-key: <key>"). Empty: no authentication (allowed by
	// `loopctl serve` only on a loopback address), and then the gateway
	// accepts only loopback Host names and JSON request bodies (a web page
	// cannot spend upstream credit or read answers through the browser).
	ClientKeys []ClientKey
	// AdminKeys, when set, are the only keys that open /metrics and
	// /dashboard/ (YAML admin_keys, same shape as client_keys). Empty: any
	// client key opens them (and no key is needed when there are no
	// ClientKeys).
	AdminKeys []ClientKey
	// Upstreams are the OpenAI-compatible servers models are served by.
	Upstreams []Upstream
	// Models are the model names clients use, each with its own model
	// breaker and fallback chain.
	Models []Model
	// Pools are models on several deployments at once (YAML pools:), named
	// pool/<name> by models' primaries and chains.
	Pools []Pool
	// Retry is the retry ladder applied to every upstream request.
	Retry Retry
	// Timeouts bound upstream requests.
	Timeouts Timeouts
	// Limits bound client requests.
	Limits Limits
	// Store names a shared breaker store (docs/FLEET.md). Empty: in-process state.
	Store Store
}

// ClientKey is one client credential.
type ClientKey struct {
	// Name identifies the key in logs (the key itself is never logged).
	Name string
	// KeyEnv is the environment variable holding the key (YAML key_env).
	KeyEnv string
	// KeyFile is a file holding the key (YAML key_file; surrounding
	// whitespace is trimmed), instead of KeyEnv: a mounted secret that is
	// rotated in place takes effect at the next reload (docs/GATEWAY.md
	// §9.3).
	KeyFile string
	// Key is the key itself, for Go callers; when set, KeyEnv is not read.
	// It cannot be set from YAML, so keys never sit in config files.
	Key string
}

// Upstream is a model server, referred to as name/<model>.
type Upstream struct {
	// Name is the prefix models of this upstream are named with.
	Name string
	// API is the upstream's wire (YAML api): [APIOpenAI] serves chat
	// completions, responses and embeddings; [APIAnthropic] serves
	// messages, and so do [APIBedrock] and [APIVertex] (Anthropic's models
	// on Amazon Bedrock and Google Vertex AI, docs/GATEWAY.md §10.2).
	// "": openai.
	API string
	// BaseURL is the API root. openai: it ends in /v1, e.g.
	// https://api.openai.com/v1, and the gateway appends /chat/completions,
	// /responses or /embeddings. anthropic: the host, e.g.
	// https://api.anthropic.com, and the gateway appends /v1/messages.
	// It has no query string. bedrock and vertex: "" is the region's
	// endpoint (https://bedrock-runtime.{region}.amazonaws.com,
	// https://{region}-aiplatform.googleapis.com).
	BaseURL string
	// APIKeyEnv is the environment variable holding the upstream's key,
	// sent as "Authorization: Bearer <key>" (openai) or "x-api-key: <key>"
	// (anthropic). "": no credentials sent.
	APIKeyEnv string
	// APIKeyFile is a file holding the upstream's key (YAML api_key_file;
	// surrounding whitespace is trimmed), instead of APIKeyEnv; it is
	// re-read at every reload.
	APIKeyFile string
	// APIKey is the key itself, for Go callers; when set, APIKeyEnv is not
	// read. It cannot be set from YAML.
	APIKey string
	// Wires are the wires an openai upstream serves (YAML wires: chat,
	// responses); a client request on a wire it does not serve reaches it
	// translated (docs/GATEWAY.md §8.1). nil: both.
	Wires []string
	// Translate says how translated requests reach an openai upstream.
	Translate Translate
	// DefaultMaxTokens is the max_tokens of a request translated for an
	// anthropic upstream that gave none (Messages requires it). 0: 4096.
	DefaultMaxTokens int
	// Auth is how requests to the upstream are authenticated (YAML auth,
	// docs/GATEWAY.md §10.1); the zero value: the api's default.
	Auth Auth
	// Region is a bedrock or vertex upstream's region (required for
	// them; its base_url's default names it), and sigv4's signing region.
	Region string
	// Project is a vertex upstream's Google Cloud project id (required).
	Project string
	// APIVersion, on an openai upstream, is Azure OpenAI's api-version
	// (YAML api_version, e.g. 2024-10-21): requests go to base_url +
	// /openai/deployments/{model}/chat/completions?api-version=…, the
	// model name being the deployment's. "": the path of any openai
	// upstream (Azure's v1 API: base_url …/openai/v1).
	APIVersion string
}

// Translate is how translated requests reach an openai upstream (YAML
// translate); the zero value is the default of every field.
type Translate struct {
	// To is the wire a Messages request is sent on: "chat" or "responses".
	// "": chat (or the one wire the upstream serves).
	To string
	// MaxTokensField is the chat field a limit is sent in: "max_tokens" or
	// "max_completion_tokens". "": max_tokens.
	MaxTokensField string
	// NoStreamUsage: translated chat streams do not ask for
	// stream_options.include_usage (YAML stream_usage: false). false: they
	// ask, so a Messages client gets its usage.
	NoStreamUsage bool
}

// Model is a model name clients use.
type Model struct {
	// Name is what clients put in "model". It must not contain "/" (that
	// form addresses an upstream model directly).
	Name string
	// Primary is the upstream model served normally, as upstream/model.
	Primary string
	// Chain are the backups, in order, as upstream/model.
	Chain []string
	// Breaker tunes the model breaker (SEMANTICS §3); zero values are the
	// fallback package's defaults.
	Breaker Breaker
	// Attempts is the request's attempt budget (turns of the model breaker, each through
	// the retry ladder). 0: enough to walk the chain once (the primary's
	// TripThreshold + each entry's MaxFailCount + 1).
	Attempts int
	// HedgeAfter turns on hedging (SEMANTICS §7.4): an attempt that has
	// produced neither its first content chunk nor its whole answer after
	// this long is also started on the next usable model, and the first to
	// produce one is served. 0: no hedging.
	HedgeAfter time.Duration
	// HedgeBudget is what each request adds to the model's hedge bucket
	// (starts full, capped at 10, a hedge spends 1). 0: 0.1.
	HedgeBudget float64
	// OnRefusal is what an answer refused before any content does
	// (docs/GATEWAY.md §8.7): "pass" serves it, "fallback" serves the
	// request from the next chain entry with no verdict. "": pass.
	OnRefusal string
}

// Breaker holds the model breaker's settings; each zero value means the
// default of the corresponding fallback.Settings field.
type Breaker struct {
	TripThreshold     int           // 0: 3
	RecoveryTimeout   time.Duration // 0: 60s
	RecoverySuccesses int           // 0: 2
	MaxFailCount      int           // 0: 2
	ProbeTimeout      time.Duration // 0: 5m
	QuotaCooldown     time.Duration // 0: 10m (SEMANTICS §3: open this long after a quota failure without a hint)
	// The failure-rate window of SEMANTICS §8.1 and the slow calls of §8.2
	// (opt-in; see [fallback.Settings]).
	FailureRate   float64       // 0: off; else in (0, 1]
	RateWindow    time.Duration // 0: 30s
	RateMinCalls  int           // 0: 20
	SlowCallAfter time.Duration // 0: off (time to first content)
	SlowCallRate  float64       // 0: off; else in (0, 1]
	// Repeated trips back off (SEMANTICS §9.1; see [fallback.Settings]).
	RecoveryBackoff    float64       // 0 or 1: off; else a finite factor ≥ 1
	MaxRecoveryTimeout time.Duration // 0: 10 × RecoveryTimeout in force; never below it
}

// Retry holds the retry ladder's settings (SEMANTICS §4); zero values are
// the retry package's defaults. In YAML, max_retries: 0 is read as
// MaxRetries -1 (no retries): a key that is present is honoured.
type Retry struct {
	MaxRetries int           // 0: 3; negative: none
	BaseDelay  time.Duration // 0: 100ms
	MaxDelay   time.Duration // 0: 10s
	// RateLimitRetries is how many rate-limited answers are waited out when
	// no other model is usable (SEMANTICS §7.1). 0: 3; negative: none.
	RateLimitRetries int
	// RateLimitWait caps the total time one request waits out rate limits;
	// past it the request answers 429 with Retry-After. 0: 1s; negative:
	// never wait (YAML rate_limit_wait: 0).
	RateLimitWait time.Duration
	// Budget is what each request adds to the retry budget of each model
	// it reaches (SEMANTICS §8.3): a same-model retry or a rate-limited
	// wait spends a token. 0: 0.2; [RetryBudgetOff] (YAML off): no budget;
	// [RetryBudgetNone] (YAML 0): no same-model retries at all.
	Budget float64
	// BudgetBurst is the size of each model's retry budget, which starts
	// full. 0: 10.
	BudgetBurst float64
}

// Values of Retry.Budget that are not a number of tokens.
const (
	// RetryBudgetOff turns the retry budget off (YAML retry.budget: off):
	// every retry of the ladder is made.
	RetryBudgetOff = -1.0
	// RetryBudgetNone is an explicit zero budget (YAML retry.budget: 0): no
	// same-model retries and no rate-limited waits; an attempt that fails
	// moves on to the next model at once. (A library budget cannot say
	// this: its zero is the default, and its bucket starts full.)
	RetryBudgetNone = -2.0
)

// Timeouts bound one upstream request.
type Timeouts struct {
	// Total bounds the whole client request: every attempt and wait, less
	// a margin, and the earlier of it and the client's own timeout
	// (X-Stainless-Timeout, x-loopctl-timeout) is the request's deadline
	// (SEMANTICS §7.3). 0: 10m.
	Total time.Duration
	// Request bounds one upstream request, whole (streams included).
	// 0: 10m.
	Request time.Duration
	// FirstByte bounds the wait for the upstream's first byte: the response
	// headers of a non-streaming request, the first content chunk of a
	// stream. 0: 60s.
	FirstByte time.Duration
	// Idle bounds the wait for more of an upstream's body once its first
	// bytes have come (between a stream's chunks): an upstream silent for
	// longer is cut, a failure of the model. 0: 60s.
	Idle time.Duration
}

// Limits bound client requests.
type Limits struct {
	// MaxBody is the largest request body accepted, in bytes. 0: 10 MiB.
	MaxBody int64
	// MaxResponse is the largest non-streaming upstream answer the gateway
	// holds for one request, in bytes (a larger one is a 502
	// response_too_large, no verdict against the model); the whole gateway
	// holds at most ResponseBudgetFactor times the larger of MaxResponse and
	// MaxBody at once, answers and request bodies together (beyond it, 503
	// gateway_busy with Retry-After). 0: 64 MiB.
	MaxResponse int64
	// MaxDirect is how many upstream/model names not named in the config
	// may have their own breaker (and metric series and dashboard card) at
	// once: least recently used closed breakers are evicted first; when
	// every slot holds an open breaker a new name is refused with 429 and
	// Retry-After. 0: 64; negative ([NoDirect]): such names are refused
	// (404). YAML max_direct: 0 is read as NoDirect.
	MaxDirect int
}

// NoDirect is the value of Limits.MaxDirect that turns off upstream/model
// names not named in the config.
const NoDirect = -1

// Store names the shared breaker store.
type Store struct {
	// Redis is a redis:// or rediss:// URL. "": in-process state.
	Redis string
	// Prefix prefixes every key. "": "loopctl".
	Prefix string
	// Required makes `loopctl serve` refuse to start while the store does
	// not answer. false: it starts with local breakers and joins the store
	// when it answers (docs/FLEET.md).
	Required bool
}

// Defaults.
const (
	DefaultListen  = "127.0.0.1:4000"
	DefaultRequest = 10 * time.Minute
	DefaultTotal   = 10 * time.Minute
	// DefaultRateLimitWait is Retry.RateLimitWait's default.
	DefaultRateLimitWait = time.Second
	DefaultFirstByte     = 60 * time.Second
	DefaultMaxBody       = 10 << 20
	// DefaultIdle is Timeouts.Idle's default.
	DefaultIdle = 60 * time.Second
	// DefaultMaxResponse is Limits.MaxResponse's default.
	DefaultMaxResponse = 64 << 20
	// DefaultMaxDirect is Limits.MaxDirect's default.
	DefaultMaxDirect = 64
)

// LoadConfig reads and parses the YAML file at path; see [ParseConfig].
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	return ParseConfig(b)
}

// Problem is one thing wrong with a configuration, named by its key path,
// e.g. `models[1].chain[0]`.
type Problem struct {
	Path    string
	Message string
}

// Error returns "path: message".
func (p Problem) Error() string {
	if p.Path == "" {
		return p.Message
	}
	return p.Path + ": " + p.Message
}

// ConfigError lists every problem found in a configuration. Its Error text
// has one problem per line.
type ConfigError struct {
	Problems []Problem
}

// Error returns the problems, one per line.
func (e *ConfigError) Error() string {
	s := ""
	for i, p := range e.Problems {
		if i > 0 {
			s += "\n"
		}
		s += p.Error()
	}
	return s
}

// problems collects Problems.
type problems []Problem

func (ps *problems) add(path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return &ConfigError{Problems: ps}
}
