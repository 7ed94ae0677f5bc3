package fallback

import (
	"cmp"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/internal/ratewindow"
)

// State is the state of a [Manager].
type State int

// The states of a [Manager].
const (
	// Primary: turns go to the primary model. The initial state.
	Primary State = iota
	// Fallback: tripped; turns go to the active chain entry.
	Fallback
	// Recovering: the cooldown has passed; probe turns test the primary.
	Recovering
)

// String returns "primary", "fallback" or "recovering".
func (s State) String() string {
	switch s {
	case Primary:
		return "primary"
	case Fallback:
		return "fallback"
	case Recovering:
		return "recovering"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Kind is the kind of a failed turn.
type Kind int

// The kinds of failed turns.
const (
	// Transient: any failure that is not a rate-limit escalation.
	Transient Kind = iota
	// RateLimit: the provider kept answering "too many requests" (a throttle
	// or an overload: the retry ladder escalated). A rate-limited probe
	// re-trips at once.
	RateLimit
	// Quota: the account's quota or billing is exhausted: it will not
	// pass by itself within seconds. A Quota failure trips the primary at once
	// (from Primary or Recovering) and spends a chain entry's whole budget.
	Quota
)

// String returns "transient", "rate-limit" or "quota".
func (k Kind) String() string {
	switch k {
	case Transient:
		return "transient"
	case RateLimit:
		return "rate-limit"
	case Quota:
		return "quota"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Default values used when a [Settings] field is zero.
const (
	DefaultTripThreshold           = 3
	DefaultRecoveryTimeout         = 60 * time.Second
	DefaultRecoverySuccessesNeeded = 2
	DefaultMaxFailCount            = 2
	DefaultProbeTimeout            = 5 * time.Minute
	DefaultQuotaCooldown           = 10 * time.Minute
	DefaultHedgeBudget             = 0.1
)

// Cause says why a cooldown ends when it does ([Snapshot.CooldownCause]).
type Cause int

// The causes of a cooldown's end.
const (
	// CauseRecoveryTimeout: the cooldown ends at trip time + RecoveryTimeout.
	CauseRecoveryTimeout Cause = iota
	// CauseHint: a failure of the streak that tripped carried a hint later
	// than trip time + RecoveryTimeout; the cooldown ends at that hint.
	CauseHint
	// CauseQuota: a Quota failure tripped; the cooldown ends at its hint, or
	// at trip time + QuotaCooldown, never before trip time + RecoveryTimeout.
	CauseQuota
	// CauseManual: an operator's hold ([Manager.Hold], SEMANTICS §8.5); the
	// cooldown ends at the later of the hold's until and the cooldown that
	// was running, or when [Manager.Release] ends it.
	CauseManual
	// CauseBackoff: the cooldown ends at trip time + c(n), the base cooldown
	// grown by RecoveryBackoff for the n-th opening in a row (n > 1,
	// SEMANTICS §9.1). It follows the other causes so that their numbers,
	// which a fleet store keeps, stay as they were.
	CauseBackoff
)

// String returns "recovery_timeout", "hint", "quota", "manual" or "backoff".
func (c Cause) String() string {
	if c >= 0 && int(c) < len(causeTexts) {
		return causeTexts[c]
	}
	return "Cause(" + strconv.Itoa(int(c)) + ")"
}

// Settings configures a [Manager].
type Settings struct {
	// Primary is the primary model. Required: empty or blank is an error.
	Primary string
	// Chain lists the backup models, in order. Zero (nil): no chain; the manager
	// still trips (bookkeeping and events) but keeps routing to the primary and
	// never returns ErrExhausted. Blank entries, duplicates and the primary
	// itself are errors. [New] copies the slice.
	Chain []string
	// TripThreshold is the number of consecutive failed turns on the primary
	// that trips the manager, and of consecutive transient probe failures that
	// re-trips it. Zero: 3. Negative: an error.
	TripThreshold int
	// RecoveryTimeout is the cooldown: how long after the trip the next turn
	// probes the primary. Zero: 60s. Negative: an error.
	RecoveryTimeout time.Duration
	// RecoverySuccessesNeeded is the number of consecutive probe successes that
	// returns the manager to Primary. Zero: 2. Negative: an error.
	RecoverySuccessesNeeded int
	// MaxFailCount is each chain entry's budget of failed turns (strikes); an
	// entry with this many is failed. Zero: 2. Negative: an error.
	MaxFailCount int
	// ProbeTimeout is the lease of a probe turn: a probe not settled after this
	// long frees its slot and counts as one Transient probe failure at the lease
	// end ([Ticket.Deadline]; the caller bounds the probe's request by it). Zero:
	// 5m. Negative: an error.
	ProbeTimeout time.Duration
	// QuotaCooldown is the cooldown after a Quota failure without a hint
	// tripped the primary; never shorter than RecoveryTimeout. Zero:
	// 10m. Negative: an error.
	QuotaCooldown time.Duration
	// HedgeAfter is the delay after which a turn still waiting for its first
	// content may be hedged on the next usable model ([Manager.Hedge], SEMANTICS
	// §7.4). Zero: no hedging (Hedge returns false). Negative: an error.
	HedgeAfter time.Duration
	// HedgeBudget is what each turn (its first [Manager.Next]) adds to the
	// manager's hedge bucket, which starts full at 10 and is capped at 10; a
	// hedge spends 1. Zero: 0.1. Negative (or NaN): an error.
	HedgeBudget float64
	// FailureRate turns on the failure-rate window of SEMANTICS §8.1 (rev
	// 4): in Primary, after each failure of the primary's own turn, the
	// manager trips (exactly as on the TripThreshold-th consecutive failure)
	// when the window of the last RateWindow holds at least RateMinCalls
	// verdicts and failures/verdicts ≥ FailureRate. Zero: off. Otherwise it
	// must be in (0, 1].
	FailureRate float64
	// RateWindow is the span of the window of §8.1 and §8.2: 10 buckets of
	// RateWindow/10, rolled lazily. Zero: 30s. Negative: an error.
	RateWindow time.Duration
	// RateMinCalls is the number of verdicts the window must hold before the
	// failure rate or the slow-call rate may trip. Zero: 20. Negative: an
	// error.
	RateMinCalls int
	// SlowCallAfter is the slow-call threshold of §8.2: a success of the
	// primary whose first content came later than this after the turn's
	// start ([Ticket.SuccessAfter]) is a slow call. Zero: off (with
	// SlowCallRate). Negative: an error.
	SlowCallAfter time.Duration
	// SlowCallRate trips the manager, after a slow success, when slow
	// calls/verdicts in the window reach it (with at least RateMinCalls
	// verdicts). Zero: off (with SlowCallAfter). Otherwise in (0, 1].
	SlowCallRate float64
	// RetryBudget is what each turn adds to the retry budget of each model it
	// reaches (SEMANTICS §8.3): a same-model retry spends one token
	// ([Ticket.Retry], [Manager.Retry]). Zero: 0.2. Negative: the budget is
	// off (every retry allowed), the one setting where a negative value is
	// not an error. NaN: an error.
	RetryBudget float64
	// RetryBudgetBurst is the size of each model's retry budget, which starts
	// full. Zero: 10. Negative (or NaN): an error.
	RetryBudgetBurst float64
	// RecoveryBackoff grows the cooldown of repeated openings (SEMANTICS
	// §9.1): the opening that makes the trip count n = k waits
	// min(RecoveryTimeout × RecoveryBackoff^(k−1), MaxRecoveryTimeout)
	// instead of RecoveryTimeout, so a brownout that re-trips each time the
	// breaker closes costs fewer probes the longer it lasts. Zero or 1: off
	// (the count is still kept and reported). It must be finite and ≥ 1:
	// NaN, ±Inf and values in (0, 1) are errors, as is a negative one.
	RecoveryBackoff float64
	// MaxRecoveryTimeout caps the grown cooldown, and is the reset window of
	// the trip count: an opening that comes this long or longer after the
	// manager last entered Primary counts from n = 0 again. Zero: 10 ×
	// RecoveryTimeout. Below RecoveryTimeout (the value in force, explicit
	// or default): an error.
	MaxRecoveryTimeout time.Duration
	// Now is the clock. Zero (nil): time.Now, read once at New and then advanced
	// by the monotonic clock. If set, New reads it once too. Now must not call
	// into the manager.
	Now func() time.Time
	// OnTransition, if not nil, is called after every transition, outside every
	// lock, in the order of the transitions; with one caller at a time it has
	// returned before the call that caused the transition returns. It may call
	// back into the manager. A transition that happened lazily (the re-trip
	// caused by an expired probe lease) is delivered by the next Begin,
	// settlement, SetAvailable or Reset, with At the time it happened; pure reads
	// deliver nothing. Zero (nil): no callbacks, and no bookkeeping for them.
	OnTransition func(Transition)
	// Backend, if not nil, keeps the manager's state outside the process,
	// shared with every process that uses the same backend (see [Backend];
	// package fleet provides one on Redis). Zero (nil): in process.
	Backend Backend
}

// Transition describes one state change of a [Manager], or a chain advance
// (From == To == Fallback).
type Transition struct {
	// From and To are the states before and after.
	From, To State
	// FromModel and ToModel are the models the states route to before and after:
	// the primary for Primary and Recovering; for Fallback the active chain entry,
	// "" when the chain is spent, or the primary when there is no chain.
	FromModel, ToModel string
	// At is when the transition happened: the time of the call that caused it,
	// or the end of the lease of an unsettled probe whose expiry re-tripped.
	At time.Time
}

// String returns text such as
//
//	primary -> fallback ("gpt-a" -> "gpt-b") at 2026-01-01T00:00:00Z
func (t Transition) String() string {
	return t.From.String() + " -> " + t.To.String() +
		" (" + strconv.Quote(t.FromModel) + " -> " + strconv.Quote(t.ToModel) + ") at " +
		t.At.Format(time.RFC3339Nano)
}

// validate returns every problem of s, joined, or nil.
func (s Settings) validate() error {
	var errs []error
	bad := func(field, problem string) {
		errs = append(errs, &SettingsError{Field: field, Problem: problem})
	}
	switch {
	case s.Primary == "":
		bad("Primary", "must not be empty")
	case strings.TrimSpace(s.Primary) == "":
		bad("Primary", strconv.Quote(s.Primary)+" is blank")
	}
	seen := make(map[string]int, len(s.Chain))
	for i, c := range s.Chain {
		field := "Chain[" + strconv.Itoa(i) + "]"
		if strings.TrimSpace(c) == "" {
			bad(field, strconv.Quote(c)+" is blank")
			continue
		}
		if c == s.Primary {
			bad(field, strconv.Quote(c)+" is the primary")
			continue
		}
		if j, dup := seen[c]; dup {
			bad(field, strconv.Quote(c)+" duplicates Chain["+strconv.Itoa(j)+"]")
			continue
		}
		seen[c] = i
	}
	negInt := func(field string, v int) {
		if v < 0 {
			bad(field, "must not be negative (got "+strconv.Itoa(v)+")")
		}
	}
	negDur := func(field string, v time.Duration) {
		if v < 0 {
			bad(field, "must not be negative (got "+v.String()+")")
		}
	}
	negInt("TripThreshold", s.TripThreshold)
	negDur("RecoveryTimeout", s.RecoveryTimeout)
	negInt("RecoverySuccessesNeeded", s.RecoverySuccessesNeeded)
	negInt("MaxFailCount", s.MaxFailCount)
	negDur("ProbeTimeout", s.ProbeTimeout)
	negDur("QuotaCooldown", s.QuotaCooldown)
	negDur("HedgeAfter", s.HedgeAfter)
	if !(s.HedgeBudget >= 0) {
		bad("HedgeBudget", "must not be negative (got "+fmtFloat(s.HedgeBudget)+")")
	}
	s.validateWindow(bad, negInt, negDur)
	return errors.Join(errs...)
}

// validateWindow checks the settings of SEMANTICS §8.
func (s Settings) validateWindow(bad func(field, problem string), negInt func(string, int), negDur func(string, time.Duration)) {
	rate := func(field string, v float64) {
		if !(v >= 0 && v <= 1) {
			bad(field, "must be in (0, 1], or 0 for off (got "+fmtFloat(v)+")")
		}
	}
	rate("FailureRate", s.FailureRate)
	negDur("RateWindow", s.RateWindow)
	negInt("RateMinCalls", s.RateMinCalls)
	negDur("SlowCallAfter", s.SlowCallAfter)
	rate("SlowCallRate", s.SlowCallRate)
	if math.IsNaN(s.RetryBudget) {
		bad("RetryBudget", "must be a number (got NaN)")
	}
	if !(s.RetryBudgetBurst >= 0) {
		bad("RetryBudgetBurst", "must not be negative (got "+fmtFloat(s.RetryBudgetBurst)+")")
	}
	s.validateBackoff(bad)
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// config is the immutable part of a Manager, with defaults applied.
type config struct {
	primary         string
	models          []string // the chain; never mutated after New
	tripThreshold   int
	successesNeeded int
	maxFail         int
	recoveryTimeout time.Duration
	probeTimeout    time.Duration
	quotaCooldown   time.Duration
	hedgeAfter      time.Duration
	hedgeBudget     float64
	rule            ratewindow.Rule // §8.1, §8.2; zero rates: off
	rateWindow      time.Duration
	slowAfter       time.Duration // §8.2; 0: off
	retryFeed       float64       // §8.3
	retryBurst      float64
	probeSlowAfter  time.Duration // §9.2: SlowCallAfter alone; 0: off
	backoff         float64       // §9.1: RecoveryBackoff; 1 when off
	maxRecovery     time.Duration // §9.1: the cap of c(n) and the reset window of n
}

// windowed reports whether the failure-rate window is on (§8.1 or §8.2).
func (c *config) windowed() bool { return c.rule.FailureRate > 0 || c.rule.SlowRate > 0 }

func newConfig(s Settings) config {
	models := make([]string, len(s.Chain))
	copy(models, s.Chain)
	hedgeBudget := s.HedgeBudget
	if hedgeBudget == 0 {
		hedgeBudget = DefaultHedgeBudget
	}
	rule := ratewindow.Rule{FailureRate: s.FailureRate,
		MinCalls: int64(cmp.Or(s.RateMinCalls, ratewindow.DefaultMinCalls))}
	var slowAfter time.Duration
	if s.SlowCallAfter > 0 && s.SlowCallRate > 0 {
		rule.SlowRate, slowAfter = s.SlowCallRate, s.SlowCallAfter
	}
	return config{
		primary:         s.Primary,
		models:          models,
		tripThreshold:   cmp.Or(s.TripThreshold, DefaultTripThreshold),
		successesNeeded: cmp.Or(s.RecoverySuccessesNeeded, DefaultRecoverySuccessesNeeded),
		maxFail:         cmp.Or(s.MaxFailCount, DefaultMaxFailCount),
		recoveryTimeout: cmp.Or(s.RecoveryTimeout, DefaultRecoveryTimeout),
		probeTimeout:    cmp.Or(s.ProbeTimeout, DefaultProbeTimeout),
		quotaCooldown:   cmp.Or(s.QuotaCooldown, DefaultQuotaCooldown),
		hedgeAfter:      s.HedgeAfter,
		hedgeBudget:     hedgeBudget,
		rule:            rule,
		rateWindow:      cmp.Or(s.RateWindow, ratewindow.DefaultSpan),
		slowAfter:       slowAfter,
		retryFeed:       s.RetryBudget,
		retryBurst:      s.RetryBudgetBurst,
		probeSlowAfter:  s.SlowCallAfter,
		backoff:         max(s.RecoveryBackoff, 1),
		maxRecovery:     maxRecovery(s),
	}
}
