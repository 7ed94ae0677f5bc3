package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"
)

// problems collects what is wrong with a Config, in the order New finds it.
type problems []error

// add records one problem, prefixed "agent: ".
func (p *problems) add(format string, args ...any) {
	*p = append(*p, fmt.Errorf("agent: "+format, args...))
}

// withDefaults copies cfg's scalar settings into a new Agent and applies the
// defaults of their zero values (clocks, MaxTurns, TurnAttempts, ToolTimeout).
func withDefaults(cfg Config) *Agent {
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
	if a.maxTurns == 0 {
		a.maxTurns = DefaultMaxTurns
	}
	if a.turnAttempts == 0 {
		a.turnAttempts = walkChain(cfg.Models)
	}
	if a.toolTimeout == 0 {
		a.toolTimeout = DefaultToolTimeout
	}
	return a
}

// validateNumbers records every negative count or duration in cfg, and what
// the retry policy's own validation rejects.
func (p *problems) validateNumbers(cfg Config) {
	if cfg.MaxTurns < 0 {
		p.add("MaxTurns must not be negative (got %d)", cfg.MaxTurns)
	}
	if cfg.TurnAttempts < 0 {
		p.add("TurnAttempts must not be negative (got %d)", cfg.TurnAttempts)
	}
	if cfg.ToolTimeout < 0 {
		p.add("ToolTimeout must not be negative (got %v)", cfg.ToolTimeout)
	}
	for i, t := range cfg.Tools {
		if t.Timeout < 0 {
			p.add("Tools[%d] (%q): Timeout must not be negative (got %v)", i, t.Name, t.Timeout)
		}
	}
	if cfg.RequestTimeout < 0 {
		p.add("RequestTimeout must not be negative (got %v)", cfg.RequestTimeout)
	}
	if cfg.MaxTokens < 0 {
		p.add("MaxTokens must not be negative (got %d)", cfg.MaxTokens)
	}
	if err := cfg.Retry.Validate(); err != nil {
		p.add("Retry: %w", err)
	}
}

// buildProviders maps every model the breaker may route to (the primary and
// the chain) to its provider, recording each model that has none.
func (a *Agent) buildProviders(cfg Config, errs *problems) {
	a.providers = make(map[string]Provider)
	for _, m := range append([]string{cfg.Models.Primary}, cfg.Models.Chain...) {
		p := cfg.Providers[m]
		if p == nil {
			p = cfg.Provider
		}
		if p == nil {
			if strings.TrimSpace(m) != "" { // blank names are fallback.New's to report
				errs.add("no provider for model %q (set Config.Provider or Config.Providers[%q])", m, m)
			}
			continue
		}
		a.providers[m] = p
	}
}

// buildTools copies cfg's tools into the Agent's index and specs, defaulting
// their Parameters and Timeout, and records blank or duplicate names, tools
// without Func and Parameters that are not JSON.
func (a *Agent) buildTools(cfg Config, errs *problems) {
	a.byName = make(map[string]*Tool, len(cfg.Tools))
	names := make([]string, 0, len(cfg.Tools))
	for i := range cfg.Tools {
		t := cfg.Tools[i] // copy: the caller's slice stays theirs
		switch {
		case strings.TrimSpace(t.Name) == "":
			errs.add("Tools[%d] has a blank name", i)
			continue
		case a.byName[t.Name] != nil:
			errs.add("duplicate tool name %q", t.Name)
			continue
		case t.Func == nil:
			errs.add("tool %q has no Func", t.Name)
		}
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if !json.Valid(params) {
			errs.add("tool %q: Parameters is not valid JSON", t.Name)
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
}

// buildBackups copies cfg.Backups, recording names that are not tools and
// tools named as their own backup. It runs after buildTools.
func (a *Agent) buildBackups(cfg Config, errs *problems) {
	a.backups = make(map[string][]string, len(cfg.Backups))
	for tool, bs := range cfg.Backups {
		if _, ok := a.byName[tool]; !ok {
			errs.add("Backups names unknown tool %q", tool)
		}
		for _, b := range bs {
			if _, ok := a.byName[b]; !ok {
				errs.add("Backups[%q] names unknown tool %q", tool, b)
			}
			if b == tool {
				errs.add("Backups[%q] names the tool itself", tool)
			}
		}
		a.backups[tool] = append([]string(nil), bs...)
	}
}

// buildModelBreaker builds the model breaker, with its transitions turned
// into events after the user's OnTransition.
func (a *Agent) buildModelBreaker(cfg Config, errs *problems) {
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
		errs.add("Models: %w", err)
	}
	a.models = models
}

// buildToolBreakers builds the registry of tool breakers, with their state
// changes turned into events after the user's OnStateChange.
func (a *Agent) buildToolBreakers(cfg Config, errs *problems) {
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
		errs.add("ToolBreaker: %w", err)
	}
	a.tools = tools
}
