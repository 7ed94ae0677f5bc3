package agent

import (
	"errors"
	"log/slog"
	"time"

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
	a := withDefaults(cfg)
	var errs problems
	errs.validateNumbers(cfg)
	a.buildProviders(cfg, &errs)
	a.buildTools(cfg, &errs)
	a.buildBackups(cfg, &errs)
	a.buildModelBreaker(cfg, &errs)
	a.buildToolBreakers(cfg, &errs)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	a.router = health.NewRouter(a.tools, a.backups)
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
