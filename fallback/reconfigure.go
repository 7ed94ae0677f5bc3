package fallback

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/loopctl/loopctl-go/internal/ratewindow"
)

// ErrChainChanged is matched (with errors.Is) by the [*ChainChangedError]
// that [Manager.Reconfigure] returns for settings whose Primary or Chain
// differ from the running manager's.
var ErrChainChanged = errors.New("fallback: the primary and the chain of a running manager cannot change")

// ChainChangedError is what [Manager.Reconfigure] returns (as
// *ChainChangedError) for settings with another primary or chain: those
// name the breaker (its state belongs to them), so a new chain needs a new
// Manager. It matches [ErrChainChanged].
type ChainChangedError struct {
	// Field is "Primary" or "Chain".
	Field string
	// Running and Given are the running manager's value and the new one
	// (a chain as its models joined by spaces, in brackets).
	Running, Given string
}

// Error returns text such as
//
//	fallback: Reconfigure cannot change Chain from [b c] to [c b]: a new chain needs a new Manager
func (e *ChainChangedError) Error() string {
	return "fallback: Reconfigure cannot change " + e.Field + " from " + e.Running + " to " + e.Given +
		": a new chain needs a new Manager"
}

// Is reports whether target is [ErrChainChanged].
func (e *ChainChangedError) Is(target error) bool { return target == ErrChainChanged }

// Reconfigure gives a running manager new settings at once (GATEWAY §9.3:
// a reload keeps the state of a model whose primary and chain are
// unchanged). s is validated as [New] validates it (the same errors,
// matching [ErrInvalidSettings]); a Primary or Chain that differs from the
// running manager's is a [*ChainChangedError]; either way nothing changes.
//
// Otherwise the state is kept: the state, counters, the trip time, a hold,
// the manual disables, the chain budgets and the tickets in flight. Only the
// numbers change, and they apply from the next event on: a running cooldown
// keeps its end (an open breaker stays open until the same time, whatever
// the new RecoveryTimeout or QuotaCooldown: they apply to the next trip); a
// probe in flight keeps its lease start, and its lease end moves with
// ProbeTimeout; a lowered TripThreshold or RecoverySuccessesNeeded is
// compared at the next failure or probe success (a change of settings
// trips nothing by itself); a changed MaxFailCount changes which entries
// are failed at once, and a Fallback -> Fallback transition fires if the
// active entry changes. The hedge bucket keeps its level. The window,
// slow-call and budget settings (SEMANTICS §8) apply to the next verdict: the failure-rate
// window keeps its counts under a new FailureRate, SlowCallRate,
// SlowCallAfter or RateMinCalls, while a new RateWindow starts a fresh,
// empty window (as does a window turned on; one turned off is dropped);
// each retry budget keeps its tokens, capped at the new RetryBudgetBurst,
// and is fed RetryBudget from the next turn on. Now, OnTransition
// and Backend are those given to New; they are not read. With a Backend
// the shared breaker takes the new settings for this process's events.
func (m *Manager) Reconfigure(s Settings) error {
	if err := s.validate(); err != nil {
		return err
	}
	if s.Primary != m.cfg.primary {
		return &ChainChangedError{Field: "Primary", Running: strconv.Quote(m.cfg.primary), Given: strconv.Quote(s.Primary)}
	}
	if !slices.Equal(s.Chain, m.cfg.models) {
		return &ChainChangedError{Field: "Chain", Running: "[" + strings.Join(m.cfg.models, " ") + "]",
			Given: "[" + strings.Join(s.Chain, " ") + "]"}
	}
	nc := newConfig(s)
	if m.shared != nil { // the Manager keeps the hedging and the lease's length; the Shared the rest
		m.mu.Lock()
		m.setNumbers(&nc)
		m.mu.Unlock()
		return m.shared.Reconfigure(s)
	}
	m.locked(func(clk *clock, rec *recorder) {
		m.mc.expireLease(clk, rec) // a lease that ended under the old ProbeTimeout
		m.mc.expireDisables(clk, rec)
		before := m.mc.active()
		m.setNumbers(&nc)
		m.mc.advanced(before, clk, rec)
	})
	return nil
}

// setNumbers takes the numbers of nc (a config of the same primary and
// chain); m.mu is held.
func (m *Manager) setNumbers(nc *config) {
	m.cfg.tripThreshold, m.cfg.successesNeeded, m.cfg.maxFail = nc.tripThreshold, nc.successesNeeded, nc.maxFail
	m.cfg.recoveryTimeout, m.cfg.probeTimeout, m.cfg.quotaCooldown = nc.recoveryTimeout, nc.probeTimeout, nc.quotaCooldown
	m.cfg.hedgeAfter, m.cfg.hedgeBudget = nc.hedgeAfter, nc.hedgeBudget
	m.hedges.Retune(nc.hedgeBudget, hedgeCap) // keeps its level
	m.setWindow(nc)
	m.cfg.rule, m.cfg.slowAfter = nc.rule, nc.slowAfter
	m.cfg.retryFeed, m.cfg.retryBurst = nc.retryFeed, nc.retryBurst
	m.cfg.probeSlowAfter, m.cfg.backoff, m.cfg.maxRecovery = nc.probeSlowAfter, nc.backoff, nc.maxRecovery // n is kept (§9.1)
	for i := range m.budgets {
		m.budgets[i].Retune(nc.retryFeed, nc.retryBurst)
	}
	m.tuning.store(&m.cfg)
}

// setWindow gives the manager the window of nc (§8.1, §8.2); m.mu is held.
// The window is kept when its span is unchanged (a new rule or minimum
// applies to what it holds at the next verdict); a new span starts a fresh,
// empty window, as does a window turned on; a window turned off is dropped.
func (m *Manager) setWindow(nc *config) {
	w := m.win.Load()
	switch {
	case !nc.windowed():
		w = nil
	case w == nil || nc.rateWindow != m.cfg.rateWindow:
		w = ratewindow.New(nc.rateWindow)
	}
	m.cfg.rateWindow = nc.rateWindow
	m.mc.win = w
	m.win.Store(w)
}
