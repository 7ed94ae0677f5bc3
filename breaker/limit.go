package breaker

import (
	"math"
	"time"
)

// RateLimited reports that the call was throttled or the service overloaded
// (SEMANTICS §9.3.1): with a hint (the provider's Retry-After or reset, as a
// time on the breaker's clock) the breaker opens at once from Closed or
// HalfOpen until the hint, since the provider's figure is the precise one (a
// 1s Retry-After keeps the tool out for 1s, not for RecoveryDuration); while
// Open the cooldown ends at the later of the hint and the cooldown already
// running. Such an opening does not raise the trip count n (§9.1). A zero
// hint makes it a plain [Permit.Failure].
//
// A rate-limit verdict counts as a failure in the consecutive count and the
// last failure, whatever the permit's age: the provider's answer speaks of
// now, so it is never stale.
func (p Permit) RateLimited(hint time.Time) {
	if p.b == nil {
		return
	}
	if hint.IsZero() {
		p.b.failure(p, false, -1)
		return
	}
	p.b.limit(p, OutcomeRateLimited, hint)
}

// QuotaExhausted reports that the caller's quota at the service is spent
// (SEMANTICS §9.3.1): the breaker opens at once until the hint, or for
// QuotaCooldown (zero: 10 min) from now without one (a zero hint), never
// before the cooldown in force ends. Like [Permit.RateLimited] it does not
// raise the trip count n and is never stale.
func (p Permit) QuotaExhausted(hint time.Time) {
	if p.b != nil {
		p.b.limit(p, OutcomeQuota, hint)
	}
}

// limit applies a rate-limit verdict o (OutcomeRateLimited with a hint, or
// OutcomeQuota) of p.
func (b *Breaker) limit(p Permit, o Outcome, hint time.Time) {
	if b.shared != nil {
		sp := SharedPermit{Gen: p.gen, Probe: p.probe, Issued: p.at}
		if p.probe {
			sp.Issued, sp.Deadline = 0, b.at(p.at).UnixNano()
		}
		b.shared.SettleLimit(sp, o, hint)
		return
	}
	b.mu.Lock()
	now := b.nowLocked()
	b.expire(now)
	until, cause := b.offset(hint), CauseHint
	if o == OutcomeQuota {
		cause = CauseQuota
		if hint.IsZero() {
			until = satAdd(now, b.back.quota)
		}
	}
	if b.failures == 0 {
		b.gen++ // the first failure after a clean state: later calls start after it
	}
	if b.failures < math.MaxInt {
		b.failures++
	}
	if !b.hasFailure || now > b.lastFailure {
		b.lastFailure = now
	}
	b.hasFailure = true
	if b.mode != mOpen {
		b.resetTrips(now) // an opening, though it does not count as a trip
		b.baseUntil, b.hintUntil = noUntil, noUntil
		b.probeStart = 0
		b.setMode(mOpen)
	}
	if until > b.hintUntil {
		b.hintUntil, b.hintCause = until, cause
	}
	b.unlock()
}

// offset converts t to a clock offset, saturating.
func (b *Breaker) offset(t time.Time) int64 { return int64(t.Sub(b.epoch)) }
