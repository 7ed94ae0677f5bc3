package outage

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/retry"
)

// Sickness is how a browned-out service misbehaves while it is sick.
type Sickness int

const (
	// Failing: the service fails 3 of every 10 attempts that reach it (the
	// 2nd, 5th and 8th), never two in a row, each failure as fast as a
	// healthy answer. The consecutive rule never trips on it.
	Failing Sickness = iota
	// Slow: the service answers every attempt, successfully, but only after
	// [BrownoutScenario.SlowLatency].
	Slow
)

// String returns "failing" or "slow".
func (k Sickness) String() string {
	if k == Slow {
		return "slow"
	}
	return "failing"
}

// BrownoutScenario is a partial outage (SEMANTICS §8): N callers call a
// service that is sick for a while, failing a share of its calls or slowing
// down, never failing FailureThreshold calls in a row. Two breakers run it
// side by side: consecutive-only (FailureThreshold alone) and with the
// failure-rate window and the slow-call rule (§8.1, §8.2). A refused call is
// served by a healthy backup after BackupLatency (an agent routes around a
// refused tool); a failed attempt is retried by the ladder on the service. Start
// from [DefaultBrownout].
type BrownoutScenario struct {
	Sickness               Sickness
	Callers                int           // each with at most one call in flight
	Interval               time.Duration // between a caller's scheduled calls
	Warmup, Sick, Tail     time.Duration // healthy, sick, healthy again
	Latency, BackupLatency time.Duration // a healthy attempt; a call served by the backup
	SlowLatency            time.Duration // an attempt while the service is Slow
	FailureThreshold       int
	Cooldown, ProbeTimeout time.Duration
	FailureRate            float64 // the rate window's side (§8.1)
	RateWindow             time.Duration
	RateMinCalls           int
	SlowCallAfter          time.Duration // the rate window's side (§8.2)
	SlowCallRate           float64
	Retries                int
	RetryBase, RetryMax    time.Duration
	Seed                   uint64
	// RecoveryBackoff and MaxRecoveryTimeout (SEMANTICS §9.1) are the
	// backoff of repeated trips that [SimulateBackoff] turns on for its
	// second side (the breaker's zero values otherwise: off).
	RecoveryBackoff    float64
	MaxRecoveryTimeout time.Duration
}

// DefaultBrownout returns the brownout of bench/outage and issue 28: 40
// callers every 2 s (20 calls/s), healthy for 30 s, sick for 2 minutes,
// healthy for 1 minute; 50 ms answers, a 50 ms backup, 2 s answers when
// slow; the breaker's defaults (3 failures, 30 s cooldown and lease), and on
// the window's side failure_rate 0.25 over 10 s with at least 20 calls, slow
// calls from 1 s at a rate of 0.5; the ladder's defaults (3 retries, 100 ms
// base, 10 s max); seed 1.
func DefaultBrownout(k Sickness) BrownoutScenario {
	return BrownoutScenario{
		Sickness: k, Callers: 40, Interval: 2 * time.Second,
		Warmup: 30 * time.Second, Sick: 2 * time.Minute, Tail: time.Minute,
		Latency: 50 * time.Millisecond, BackupLatency: 50 * time.Millisecond, SlowLatency: 2 * time.Second,
		FailureThreshold: 3, Cooldown: 30 * time.Second, ProbeTimeout: 30 * time.Second,
		FailureRate: 0.25, RateWindow: 10 * time.Second, RateMinCalls: 20,
		SlowCallAfter: time.Second, SlowCallRate: 0.5,
		Retries: 3, RetryBase: 100 * time.Millisecond, RetryMax: 10 * time.Second, Seed: 1,
	}
}

// Validate returns a [*FieldError] for the first field out of range, or nil.
func (s BrownoutScenario) Validate() error {
	err := firstError(
		intRange("Callers", s.Callers, 1, 10_000),
		durRange("Interval", s.Interval, false),
		durRange("Warmup", s.Warmup, true),
		durRange("Sick", s.Sick, false),
		durRange("Tail", s.Tail, true),
		durRange("Latency", s.Latency, true),
		durRange("BackupLatency", s.BackupLatency, true),
		durRange("SlowLatency", s.SlowLatency, false),
		intRange("Retries", s.Retries, 0, maxRetries),
	)
	if err != nil {
		return err
	}
	if n := int64(s.Callers) * int64(s.horizon()/s.Interval); n > maxScheduled {
		return &FieldError{"Interval", fmt.Sprintf("is too short: %d calls scheduled (at most %d)", n, maxScheduled)}
	}
	for _, bs := range []breaker.Settings{s.settings(false), s.settings(true), s.withBackoff()} {
		if err := bs.Validate(); err != nil {
			return settingsError(err)
		}
	}
	if err := s.ladder().Validate(); err != nil {
		return &FieldError{"RetryBase", err.Error()}
	}
	return nil
}

func (s BrownoutScenario) horizon() time.Duration { return s.Warmup + s.Sick + s.Tail }
func (s BrownoutScenario) fix() time.Duration     { return s.Warmup + s.Sick }
func (s BrownoutScenario) sick(t time.Duration) bool {
	return t >= s.Warmup && t < s.fix()
}

// ladder returns the retry policy of both sides (see [newLadder]).
func (s BrownoutScenario) ladder() retry.Policy {
	return newLadder(Scenario{Retries: s.Retries, RetryBase: s.RetryBase, RetryMax: s.RetryMax})
}

// settings returns the breaker settings of one side: consecutive-only, or
// with the rate window (window).
func (s BrownoutScenario) settings(window bool) breaker.Settings {
	bs := Scenario{FailureThreshold: s.FailureThreshold, Cooldown: s.Cooldown,
		ProbeTimeout: s.ProbeTimeout}.breakerSettings(nil)
	if window {
		bs.FailureRate, bs.RateWindow, bs.RateMinCalls = s.FailureRate, s.RateWindow, s.RateMinCalls
		bs.SlowCallAfter, bs.SlowCallRate = s.SlowCallAfter, s.SlowCallRate
	}
	return bs
}

// withBackoff returns the rate window's settings with the backoff of
// repeated trips on.
func (s BrownoutScenario) withBackoff() breaker.Settings {
	bs := s.settings(true)
	bs.RecoveryBackoff, bs.MaxRecoveryTimeout = s.RecoveryBackoff, s.MaxRecoveryTimeout
	return bs
}

// settingsError is the [*FieldError] of a breaker settings error: the
// backoff's fields are the scenario's own, with the breaker's rule; any
// other is reported against FailureRate (the window's settings), as the
// breaker words it.
func settingsError(err error) *FieldError {
	var se *breaker.SettingsError
	if errors.As(err, &se) && (se.Field == "RecoveryBackoff" || se.Field == "MaxRecoveryTimeout") {
		rule := cmp.Or(se.Rule, "must not be negative")
		return &FieldError{se.Field, rule + " (got " + se.Value + ")"}
	}
	return &FieldError{"FailureRate", err.Error()}
}
