package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/internal/notify"
	"github.com/loopctl/loopctl-go/retry"
)

// Agent runs agent loops. It owns the model breaker (a [fallback.Manager]) and
// the tool breakers (a [health.Registry] and its [health.Router]); their state
// outlives a failed run and is shared by every run.
//
// An Agent is safe for concurrent use: Run may be called from many goroutines.
type Agent struct {
	providers    map[string]Provider // every model of the chain -> its provider
	models       *fallback.Manager
	primaryModel string // Models.Primary
	tools        *health.Registry
	router       *health.Router

	byName    map[string]*Tool
	specs     []ToolSpec
	toolNames string              // "a, b": for the unknown-tool text
	backups   map[string][]string // copied from Config

	retry          retry.Policy
	maxTurns       int
	turnAttempts   int
	toolTimeout    time.Duration
	requestTimeout time.Duration
	maxTokens      int
	toolNow        func() time.Time // the tool breakers' clock, for probe leases
	modelNow       func() time.Time // the model breaker's clock, for probe leases

	onEvent func(Event)
	logger  *slog.Logger
	events  notify.Queue[queued]
}

// New validates cfg and builds an Agent. Bad configuration (no provider for a
// model, blank or duplicate tool names, a tool without Func, backups naming
// unknown tools, negative numbers, and whatever the breakers reject) is an
// error naming the problem.
func New(cfg Config) (*Agent, error) {
	a := &Agent{
		retry:          cfg.Retry,
		maxTurns:       cfg.MaxTurns,
		turnAttempts:   cfg.TurnAttempts,
		toolTimeout:    cfg.ToolTimeout,
		requestTimeout: cfg.RequestTimeout,
		maxTokens:      cfg.MaxTokens,
		onEvent:        cfg.OnEvent,
		logger:         cfg.Logger,
		toolNow:        cfg.ToolBreaker.Now,
		modelNow:       cfg.Models.Now,
		primaryModel:   cfg.Models.Primary,
	}
	if a.toolNow == nil {
		a.toolNow = time.Now
	}
	if a.modelNow == nil {
		a.modelNow = time.Now
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("agent: "+format, args...)) }
	if cfg.MaxTurns < 0 {
		bad("MaxTurns must not be negative (got %d)", cfg.MaxTurns)
	}
	if cfg.TurnAttempts < 0 {
		bad("TurnAttempts must not be negative (got %d)", cfg.TurnAttempts)
	}
	if cfg.ToolTimeout < 0 {
		bad("ToolTimeout must not be negative (got %v)", cfg.ToolTimeout)
	}
	for i, t := range cfg.Tools {
		if t.Timeout < 0 {
			bad("Tools[%d] (%q): Timeout must not be negative (got %v)", i, t.Name, t.Timeout)
		}
	}
	if cfg.RequestTimeout < 0 {
		bad("RequestTimeout must not be negative (got %v)", cfg.RequestTimeout)
	}
	if cfg.MaxTokens < 0 {
		bad("MaxTokens must not be negative (got %d)", cfg.MaxTokens)
	}
	if err := cfg.Retry.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("agent: Retry: %w", err))
	}
	if a.maxTurns == 0 {
		a.maxTurns = DefaultMaxTurns
	}
	if a.turnAttempts == 0 {
		a.turnAttempts = walkChain(cfg.Models)
	}
	if a.toolTimeout == 0 {
		a.toolTimeout = DefaultToolTimeout
	}

	// Providers: one for every model the breaker may route to.
	a.providers = make(map[string]Provider)
	for _, m := range append([]string{cfg.Models.Primary}, cfg.Models.Chain...) {
		p := cfg.Providers[m]
		if p == nil {
			p = cfg.Provider
		}
		if p == nil {
			if strings.TrimSpace(m) != "" { // blank names are fallback.New's to report
				bad("no provider for model %q (set Config.Provider or Config.Providers[%q])", m, m)
			}
			continue
		}
		a.providers[m] = p
	}

	// Tools.
	a.byName = make(map[string]*Tool, len(cfg.Tools))
	names := make([]string, 0, len(cfg.Tools))
	for i := range cfg.Tools {
		t := cfg.Tools[i] // copy: the caller's slice stays theirs
		switch {
		case strings.TrimSpace(t.Name) == "":
			bad("Tools[%d] has a blank name", i)
			continue
		case a.byName[t.Name] != nil:
			bad("duplicate tool name %q", t.Name)
			continue
		case t.Func == nil:
			bad("tool %q has no Func", t.Name)
		}
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if !json.Valid(params) {
			bad("tool %q: Parameters is not valid JSON", t.Name)
		}
		t.Parameters = params
		if t.Timeout == 0 {
			t.Timeout = a.toolTimeout
		}
		a.byName[t.Name] = &t
		names = append(names, t.Name)
		a.specs = append(a.specs, ToolSpec{Name: t.Name, Description: t.Description, Parameters: params})
	}
	a.toolNames = strings.Join(names, ", ")

	a.backups = make(map[string][]string, len(cfg.Backups))
	for tool, bs := range cfg.Backups {
		if _, ok := a.byName[tool]; !ok {
			bad("Backups names unknown tool %q", tool)
		}
		for _, b := range bs {
			if _, ok := a.byName[b]; !ok {
				bad("Backups[%q] names unknown tool %q", tool, b)
			}
			if b == tool {
				bad("Backups[%q] names the tool itself", tool)
			}
		}
		a.backups[tool] = append([]string(nil), bs...)
	}

	// The model breaker, with transitions turned into events.
	ms := cfg.Models
	userTransition := ms.OnTransition
	ms.OnTransition = func(t fallback.Transition) {
		if userTransition != nil {
			userTransition(t)
		}
		a.emit(context.Background(), Event{Kind: EventModelTransition, Transition: t, Model: t.ToModel})
	}
	models, err := fallback.New(ms)
	if err != nil {
		errs = append(errs, fmt.Errorf("agent: Models: %w", err))
	}
	a.models = models

	// The tool breakers, likewise.
	ts := cfg.ToolBreaker
	userChange := ts.OnStateChange
	ts.OnStateChange = func(name string, from, to breaker.State) {
		if userChange != nil {
			userChange(name, from, to)
		}
		a.emit(context.Background(), Event{Kind: EventToolTransition, Tool: name, From: from, To: to})
	}
	tools, err := health.NewRegistry(ts)
	if err != nil {
		errs = append(errs, fmt.Errorf("agent: ToolBreaker: %w", err))
	}
	a.tools = tools

	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	a.router = health.NewRouter(tools, a.backups)
	return a, nil
}

// walkChain is the default turn budget: the primary's trip threshold, every
// chain entry's strikes, and one more attempt for the model that answers.
func walkChain(s fallback.Settings) int {
	trip := s.TripThreshold
	if trip <= 0 {
		trip = fallback.DefaultTripThreshold
	}
	strikes := s.MaxFailCount
	if strikes <= 0 {
		strikes = fallback.DefaultMaxFailCount
	}
	return trip + strikes*len(s.Chain) + 1
}

// Models returns the model breaker, for dashboards and manual control
// (SetAvailable, Reset). It is the Agent's own: changes affect every run.
func (a *Agent) Models() *fallback.Manager { return a.models }

// Tools returns the registry of tool breakers and statistics. Use its pure
// reads (WouldAllow, State, Snapshot, Summary) for dashboards: its Allow gate
// may take a half-open breaker's probe slot.
func (a *Agent) Tools() *health.Registry { return a.tools }

// Router returns the router that picks a tool or one of its backups.
func (a *Agent) Router() *health.Router { return a.router }

// ToolSpecs returns the tool descriptions sent to the model with every request.
func (a *Agent) ToolSpecs() []ToolSpec { return append([]ToolSpec(nil), a.specs...) }
