package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/ctxsleep"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/openai"
	"github.com/loopctl/loopctl-go/retry"
)

// ErrConfig is matched (errors.Is) by every configuration error of [Run].
var ErrConfig = errors.New("demo: invalid configuration")

// ErrRunFailed is matched by the error [Run] returns, with BaseURL, when a run
// ended with a hard error (see [Summary.Failures]).
var ErrRunFailed = errors.New("demo: a run against the server failed")

// ErrIncomplete is matched by the error [Run] returns when the scripted story
// did not play out as written (see [Summary.Missing]), for example on a machine
// so slow that a cooldown passed before the story waited for it.
var ErrIncomplete = errors.New("demo: the story did not play out as scripted")

// Breaker settings of the demo agent: the defaults of the library, except the
// durations, which Timing scales down.
const (
	tripThreshold    = 3 // failed turns on the primary that trip the model breaker
	probesNeeded     = 2 // probe successes that recover it
	strikes          = 2 // failed turns each chain entry may serve
	toolTrip         = 3 // consecutive failures that trip a tool breaker
	requestRetries   = 3 // transient retries of one request
	rateLimitRetries = 3 // rate-limited retries; the next 429 escalates
)

// Timing holds the scaled-down durations of the demo. Every zero field means
// its default in [DefaultTiming]; negative values are errors.
type Timing struct {
	ModelCooldown   time.Duration // the model breaker's RecoveryTimeout; 0: 6s
	ModelProbeLease time.Duration // the model breaker's ProbeTimeout; 0: 2s
	ToolCooldown    time.Duration // every tool breaker's RecoveryDuration; 0: 3s
	ToolProbeLease  time.Duration // every tool breaker's ProbeTimeout; 0: 1s
	Beat            time.Duration // pause between runs (scripted mode); 0: 1.5s
	RetryBase       time.Duration // the retry ladder's BaseDelay; 0: 50ms
	RetryMax        time.Duration // the retry ladder's MaxDelay; 0: 200ms
	RateLimitWait   time.Duration // cap on each wait after a 429 (the server asks 1s); 0: 200ms
}

// DefaultTiming is the timing of `loopctl demo`: the story takes about 17
// seconds. The cooldowns leave a margin of more than a second over the runs
// and beats the story plays while a breaker is open, so that no cooldown ends
// before the story waits for it.
var DefaultTiming = Timing{
	ModelCooldown:   6 * time.Second,
	ModelProbeLease: 2 * time.Second,
	ToolCooldown:    3 * time.Second,
	ToolProbeLease:  time.Second,
	Beat:            1500 * time.Millisecond,
	RetryBase:       50 * time.Millisecond,
	RetryMax:        200 * time.Millisecond,
	RateLimitWait:   200 * time.Millisecond,
}

// withDefaults returns t with DefaultTiming's value in every zero field; a
// negative field, or RetryMax below RetryBase, is an error.
func (t Timing) withDefaults() (Timing, error) {
	d := DefaultTiming
	var errs []error
	set := func(name string, v time.Duration, dst *time.Duration) {
		switch {
		case v < 0:
			errs = append(errs, fmt.Errorf("%w: Timing.%s must not be negative (got %v)", ErrConfig, name, v))
		case v > 0:
			*dst = v
		}
	}
	set("ModelCooldown", t.ModelCooldown, &d.ModelCooldown)
	set("ModelProbeLease", t.ModelProbeLease, &d.ModelProbeLease)
	set("ToolCooldown", t.ToolCooldown, &d.ToolCooldown)
	set("ToolProbeLease", t.ToolProbeLease, &d.ToolProbeLease)
	set("Beat", t.Beat, &d.Beat)
	set("RetryBase", t.RetryBase, &d.RetryBase)
	set("RetryMax", t.RetryMax, &d.RetryMax)
	set("RateLimitWait", t.RateLimitWait, &d.RateLimitWait)
	if d.RetryMax < d.RetryBase {
		errs = append(errs, fmt.Errorf("%w: Timing.RetryMax (%v) must not be below RetryBase (%v)", ErrConfig, d.RetryMax, d.RetryBase))
	}
	return d, errors.Join(errs...)
}

// Config configures [Run]. The zero value plays the scripted story on the
// in-process server, in real time, writing nothing.
type Config struct {
	// Out receives the live lines and the summary. nil: io.Discard.
	Out io.Writer
	// Color writes ANSI colours. false: plain text.
	Color bool
	// Spinner keeps a spinner line below the output while waiting; only for a
	// terminal. false: none.
	Spinner bool

	// Now is the clock of both breakers and of the elapsed times. nil: time.Now.
	Now func() time.Time
	// Wait makes the pauses between runs; it returns early with ctx.Err() when
	// ctx ends. nil: a real timer. A test's fake clock can just advance.
	Wait func(ctx context.Context, d time.Duration) error
	// Timing scales the story. Zero fields: DefaultTiming's.
	Timing Timing
	// Rand draws the retry ladder's jitter (see retry.Policy). nil: math/rand/v2.
	Rand func() float64
	// RequestTimeout bounds each model request. 0: none beyond ctx.
	RequestTimeout time.Duration

	// BaseURL, when set, runs the demo agent (same tools, same prompts) against
	// this OpenAI-compatible API root instead of the in-process server: no
	// scripted faults, no pauses. "": the scripted story on loopback.
	BaseURL string
	// APIKey is the bearer token for BaseURL. "": the OpenAI SDK's default
	// (OPENAI_API_KEY). Unused without BaseURL.
	APIKey string
	// Model is the primary model at BaseURL; required with it, unused without.
	Model string
	// Fallback is the fallback chain at BaseURL, in order. nil: none. Unused
	// without BaseURL.
	Fallback []string
	// HTTPClient sends the requests to BaseURL. nil: a new client.
	HTTPClient *http.Client
}

// system is the system prompt of every run.
const system = "You are the loopctl demo agent. Use the tools as the user asks, one call at a time. " +
	"If a tool fails, you may try it again; if it is temporarily unavailable, say so and answer with what you have."

// Run plays the demo: the scripted story on the in-process server, or the same
// prompts against cfg.BaseURL. It writes the live lines and the summary to
// cfg.Out and returns the summary, which is never nil when the error is not a
// configuration error. The error matches [ErrConfig] for a bad cfg,
// [ErrIncomplete] when the scripted story did not play out as written,
// [ErrRunFailed] when a run against BaseURL failed, and ctx.Err() when ctx
// ended (the summary then covers what was played).
func Run(ctx context.Context, cfg Config) (*Summary, error) {
	t, err := cfg.Timing.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	f := newFaults()
	ep, closeEndpoint := cfg.endpoint(f)
	defer closeEndpoint()
	p, err := openai.New(openai.Config{BaseURL: ep.base, APIKey: ep.key, HTTPClient: ep.hc})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	tools, err := newTools(f)
	if err != nil {
		return nil, err
	}
	v := newView(cfg.Out, cfg.Color, cfg.Spinner, cfg.Now)
	ag, err := newAgent(cfg, t, ep, p, tools, v)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}

	pl := &player{ag: ag, f: f, v: v, t: t, now: cfg.Now, wait: cfg.Wait, scripted: cfg.BaseURL == "", primary: ep.primary}
	v.header(pl.intro(ep.base, ep.primary, ep.chain))
	stop := v.startSpinner()
	err = pl.play(ctx)
	stop()
	sum := pl.summary()
	sum.Write(cfg.Out, cfg.Color)
	return sum, storyError(err, sum)
}

// withDefaults returns c with Out, Now and Wait filled in: io.Discard, the
// real clock and a real timer.
func (c Config) withDefaults() Config {
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Wait == nil {
		c.Wait = ctxsleep.Sleep // a real timer
	}
	return c
}

// endpoint is the server the demo agent talks to: its API root and key, the
// primary model and its chain, and the client that sends the requests.
type endpoint struct {
	base, key, primary string
	chain              []string
	hc                 *http.Client
}

// endpoint returns the server of c: BaseURL, or (scripted) the in-process
// server playing f's faults, started here. The func it returns stops that
// server and closes the idle connections of the client it made.
func (c Config) endpoint(f *faults) (endpoint, func()) {
	scripted := c.BaseURL == ""
	ep := endpoint{base: c.BaseURL, key: c.APIKey, primary: c.Model, chain: c.Fallback, hc: c.HTTPClient}
	var closers []func()
	if ep.hc == nil || scripted {
		// Our own transport, so that no idle connection outlives Run.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		closers = append(closers, tr.CloseIdleConnections)
		ep.hc = &http.Client{Transport: tr}
		if scripted {
			tr.Proxy = nil // loopback only, whatever the environment says
		}
	}
	if scripted {
		srv := llmtest.NewOpenAI(modelScript(f, plans()))
		closers = append(closers, srv.Close)
		ep.base, ep.key = srv.BaseURL(), "demo"
		ep.primary, ep.chain = modelPrimary, []string{modelBackup1, modelBackup2}
	}
	return ep, func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
}

// newAgent builds the demo agent on provider p: the model breaker with ep's
// chain and the tool breakers on t's durations, the retry ladder, the tools,
// and every event shown on v.
func newAgent(cfg Config, t Timing, ep endpoint, p agent.Provider, tools []agent.Tool, v *view) (*agent.Agent, error) {
	return agent.New(agent.Config{
		Provider: p,
		Models: fallback.Settings{
			Primary: ep.primary, Chain: ep.chain,
			TripThreshold: tripThreshold, RecoveryTimeout: t.ModelCooldown,
			RecoverySuccessesNeeded: probesNeeded, MaxFailCount: strikes,
			ProbeTimeout: t.ModelProbeLease, Now: cfg.Now,
		},
		ToolBreaker: breaker.Settings{
			FailureThreshold: toolTrip, RecoveryDuration: t.ToolCooldown,
			ProbeTimeout: t.ToolProbeLease, Now: cfg.Now,
		},
		Backups: map[string][]string{toolSearch: {toolSearchBack}},
		Retry: retry.Policy{
			MaxRetries: requestRetries, BaseDelay: t.RetryBase, MaxDelay: t.RetryMax,
			RateLimitRetries: rateLimitRetries, RateLimitDelay: t.RateLimitWait, MaxRateLimitDelay: t.RateLimitWait,
			Rand: cfg.Rand,
		},
		Tools: tools,
		// Enough attempts for one turn to trip the primary and spend every
		// chain entry's strikes, and still be served.
		TurnAttempts:   tripThreshold + strikes*len(ep.chain) + 1,
		ToolTimeout:    10 * time.Second,
		RequestTimeout: cfg.RequestTimeout,
		OnEvent:        v.event,
	})
}

// storyError is Run's error once the story has played: err from playing it,
// else ErrIncomplete for a scripted transition that did not happen, else
// ErrRunFailed for a failed run.
func storyError(err error, sum *Summary) error {
	switch {
	case err != nil:
		return err
	case len(sum.Missing) > 0:
		return fmt.Errorf("%w: missing %s", ErrIncomplete, strings.Join(sum.Missing, "; "))
	case len(sum.Failures) > 0:
		return fmt.Errorf("%w (%d of %d runs failed; first: %s)", ErrRunFailed, len(sum.Failures), sum.Runs, sum.Failures[0])
	}
	return nil
}

// validate checks c: no negative RequestTimeout and, with BaseURL, an
// http(s) URL, a Model and no blank Fallback entry.
func (c Config) validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if c.RequestTimeout < 0 {
		bad("RequestTimeout must not be negative (got %v)", c.RequestTimeout)
	}
	if c.BaseURL == "" {
		return errors.Join(errs...)
	}
	if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		bad("BaseURL must start with http:// or https:// (got %q)", c.BaseURL)
	}
	if strings.TrimSpace(c.Model) == "" {
		bad("Model is required with BaseURL")
	}
	for i, m := range c.Fallback {
		if strings.TrimSpace(m) == "" {
			bad("Fallback[%d] is blank", i)
		}
	}
	return errors.Join(errs...)
}
