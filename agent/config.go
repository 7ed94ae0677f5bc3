package agent

import (
	"log/slog"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

// Defaults for the zero values of [Config].
const (
	// DefaultMaxTurns is the turn limit when Config.MaxTurns is 0.
	DefaultMaxTurns = 16
	// DefaultToolTimeout is a tool call's timeout when neither Tool.Timeout nor
	// Config.ToolTimeout is set.
	DefaultToolTimeout = 30 * time.Second
)

// Config configures an [Agent]. Every field documents its zero value.
type Config struct {
	// Provider serves every model that has no entry in Providers. nil: every
	// model of Models (primary and chain) must have an entry in Providers.
	Provider Provider

	// Providers maps a model name to the Provider that serves it, so that a
	// fallback chain may span providers. nil: Provider serves every model.
	Providers map[string]Provider

	// Models configures the model breaker (primary, fallback chain, thresholds,
	// clock). Models.Primary is required. Models.OnTransition, if set, is still
	// called; every transition also becomes an EventModelTransition.
	Models fallback.Settings

	// ToolBreaker configures every tool's breaker (its Name is ignored).
	// ToolBreaker.OnStateChange, if set, is still called; every state change also
	// becomes an EventToolTransition. The zero value uses the breaker defaults.
	ToolBreaker breaker.Settings

	// Backups maps a tool name to its backup tools, in order of preference (see
	// health.Router). Every name must be one of Tools. nil: no backups.
	Backups map[string][]string

	// Retry is the retry ladder around each model request. Retry.OnRetry, if
	// set, is still called; every retry also becomes an EventRetry. The zero
	// value uses the retry defaults.
	Retry retry.Policy

	// Tools are the tools offered to the model. Names must be unique and not
	// blank. nil: no tools (the first answer ends the run).
	Tools []Tool

	// MaxTurns limits the turns (model requests that succeed or fail) of one
	// run; a run still asking for tools after that many turns ends with
	// ErrMaxTurns. 0: DefaultMaxTurns (16).
	MaxTurns int

	// TurnAttempts is the per-turn budget of model attempts: a turn that fails
	// (after the retry ladder) is tried again on whatever the model breaker routes
	// to next, up to this many attempts in all. 0: enough to walk the whole
	// chain once, that is the primary's trip threshold plus every chain entry's
	// strike budget (MaxFailCount), plus one (3 + 2·len(Chain) + 1 with the
	// defaults: 8 for a chain of two), so that one turn against a dead primary
	// and dead or rate-limited backups still reaches the first healthy model.
	// A value set here is the user's cap.
	TurnAttempts int

	// ToolTimeout bounds each call of a tool that sets no Tool.Timeout of its
	// own. 0: DefaultToolTimeout (30s).
	ToolTimeout time.Duration

	// RequestTimeout bounds each single model request (each rung of the retry
	// ladder); a request cut by it is a transient failure. 0: no timeout beyond
	// the caller's context.
	RequestTimeout time.Duration

	// MaxTokens is passed in every Request. 0: the provider's default.
	MaxTokens int

	// OnEvent, if set, receives every Event. Calls are serialized and in order
	// (never two at once, even with parallel tool calls or concurrent runs), and
	// made with no lock held, so OnEvent may read or reset the Agent's breakers.
	// nil: no events.
	OnEvent func(Event)

	// Logger, if set, logs the same events: turn starts and retries at Debug,
	// finished turns at Info (failed ones, and answers cut at the token limit,
	// at Warn), tool calls at Debug (soft errors at Warn), breaker transitions
	// at Info (trips at Warn). A run's records carry its id ("run") and are
	// logged with the run's context (the ctx given to Run), so a handler can
	// read trace ids or other values from it. nil: no logging.
	Logger *slog.Logger
}
