package gateway

import (
	"cmp"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Pool is one model on several deployments (YAML pools:): its members share
// the pool's traffic, each behind its own breaker, balanced by what the
// gateway measures of them (docs/GATEWAY.md §11). A model names it as
// pool/<Name> wherever a chain entry may stand.
type Pool struct {
	// Name is what models write after "pool/": not empty, no "/".
	Name string
	// Members are the deployments, as upstream/model with a weight: at
	// least two, none twice, none a pool.
	Members []PoolMember
	// Breaker tunes every member's breaker (trip_threshold,
	// recovery_timeout, probe_timeout, quota_cooldown, failure_rate,
	// rate_window, rate_min_calls, slow_call_after, slow_call_rate,
	// recovery_backoff, max_recovery_timeout). A member closes on one fast
	// probe success, so RecoverySuccesses and MaxFailCount must be zero.
	Breaker Breaker
	// Affinity is "session" (keep a conversation on the member that holds
	// its prompt cache) or "none". "": session.
	Affinity string
	// AffinitySlack s: a session's home serves while its cost is at most
	// s × the lowest member's. 0: 2; otherwise a finite number ≥ 1.
	AffinitySlack float64
}

// PoolMember is one deployment of a pool (YAML: "upstream/model", or
// {target: upstream/model, weight: 2}).
type PoolMember struct {
	Target string  // upstream/model
	Weight float64 // the member's share ratio: finite and > 0; 0: 1
}

// Defaults of a member breaker's settings: a member's probe is a real
// request and may stream for minutes, as a model breaker's probe.
const (
	defaultMemberTripThreshold   = 3
	defaultMemberRecoveryTimeout = 30 * time.Second
	defaultMemberProbeTimeout    = 5 * time.Minute
	defaultMemberQuotaCooldown   = 10 * time.Minute
)

// memberSettings returns the breaker settings of the member breaker of
// deployment ref (upstream/model) under a pool's breaker: settings, its
// defaults applied. Its name, member@<ref>, is the one the metrics and the
// fleet store use.
func memberSettings(ref string, b Breaker) breaker.Settings {
	return breaker.Settings{
		Name:               "member@" + ref,
		FailureThreshold:   cmp.Or(b.TripThreshold, defaultMemberTripThreshold),
		RecoveryDuration:   cmp.Or(b.RecoveryTimeout, defaultMemberRecoveryTimeout),
		ProbeTimeout:       cmp.Or(b.ProbeTimeout, defaultMemberProbeTimeout),
		QuotaCooldown:      cmp.Or(b.QuotaCooldown, defaultMemberQuotaCooldown),
		FailureRate:        b.FailureRate,
		RateWindow:         b.RateWindow,
		RateMinCalls:       b.RateMinCalls,
		SlowCallAfter:      b.SlowCallAfter,
		SlowCallRate:       b.SlowCallRate,
		RecoveryBackoff:    b.RecoveryBackoff,
		MaxRecoveryTimeout: b.MaxRecoveryTimeout,
	}
}
