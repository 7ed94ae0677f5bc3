package fleet

import (
	"context"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// RateLimited reports a throttle or an overload like
// [breaker.Permit.RateLimited]: with a hint the fleet's breaker opens at once
// until the hint (measured on the store's clock as the time left until it),
// or until the cooldown already running ends, if later, without raising the
// trip count; a zero hint is a plain Failure. One round trip.
func (p Permit) RateLimited(hint time.Time) {
	switch {
	case p.b == nil:
	case hint.IsZero():
		p.b.settle(p, "failure", false)
	default:
		p.b.settleLimit(p, false, hint)
	}
}

// QuotaExhausted reports an exhausted quota like
// [breaker.Permit.QuotaExhausted]: the fleet's breaker opens until the hint,
// or for QuotaCooldown without one, never before the cooldown in force ends,
// without raising the trip count. One round trip.
func (p Permit) QuotaExhausted(hint time.Time) {
	if p.b != nil {
		p.b.settleLimit(p, true, hint)
	}
}

// settleLimit applies a rate-limit verdict of p (never stale: the provider's
// answer speaks of now) on the store, or to the local breaker while the
// store is down (Local), as settle does.
func (b *ToolBreaker) settleLimit(p Permit, quota bool, hint time.Time) {
	op, left := "ratelimited", ""
	if quota {
		op = "quota"
	}
	if !hint.IsZero() { // the time left until it, so that the store's clock measures it
		left = strconv.FormatInt(b.s.clock.toStore(hint)-b.s.clock.storeNow()/1000, 10)
	}
	mr := b.mirror.Load()
	if p.gen&localBit == 0 && mr.mode == Shared {
		if _, err := b.scriptArgs(op, p.probe, p.gen, p.at, false, left); err == nil {
			return
		}
		mr = b.mirror.Load()
	}
	if mr.mode != LocalMode {
		return
	}
	mr.local.limit(time.Now().UnixNano(), quota, !hint.IsZero(), hint.UnixNano())
	b.touched()
}

// Reconfigure applies new settings to the shared breaker in place, as
// [breaker.Breaker.Reconfigure] does: the shared state and the trip count
// stay, and the new numbers (threshold, cooldown, lease, backoff, quota
// cooldown) apply from the next event; every process of the fleet should
// apply the same ones. The name must stay the same. No round trip: the
// numbers travel with every script call.
func (b *ToolBreaker) Reconfigure(bs breaker.Settings) error {
	if err := bs.Validate(); err != nil {
		return err
	}
	if bs.Name != b.name {
		return &breaker.SettingsError{Field: "Name", Value: strconv.Quote(bs.Name),
			Rule: "must stay " + strconv.Quote(b.name) + " (Reconfigure keeps the breaker's tool)"}
	}
	if mr := b.mirror.Load(); mr.mode == Shared && mr.m == 2 && b.s.clock.storeNow() >= mr.leaseEnd()*1000 {
		// A lease that lapsed under the old numbers re-opens with them, as
		// breaker.Breaker.Reconfigure applies it first: one round trip.
		ctx, cancel := context.WithTimeout(context.Background(), b.s.timeout)
		_ = b.sync(ctx) // a store that does not answer: the lapse is applied later
		cancel()
	}
	k := newToolNumbers(bs)
	b.nums.Store(k)
	if mr := b.mirror.Load(); mr.mode == LocalMode {
		mr.local.mu.Lock()
		mr.local.setNumbers(k)
		mr.local.mu.Unlock()
	}
	return nil
}
