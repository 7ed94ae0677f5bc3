package pool

import "time"

// RateLimited reports a throttle or an overload (HTTP 429, 529, an
// overloaded error) with the provider's hint (zero: none): a Penalty sample,
// and [breaker.Permit.RateLimited], which opens the member until the hint, so
// that a 1 s Retry-After keeps it out for 1 s. A pool attempt whose every
// member was rate limited fails with kind RateLimit.
func (a Attempt) RateLimited(now time.Time, hint time.Time) {
	if a.p != nil {
		pm, _ := a.settle(now, rateLimited)
		pm.RateLimited(hint)
	}
}

// QuotaExhausted reports that the member's quota or billing is exhausted,
// with the provider's hint (zero: none): a Penalty sample, and
// [breaker.Permit.QuotaExhausted], which opens the member until the hint or
// for its QuotaCooldown. A pool attempt whose every member was out of quota
// fails with kind Quota.
func (a Attempt) QuotaExhausted(now time.Time, hint time.Time) {
	if a.p != nil {
		pm, _ := a.settle(now, quotaExhausted)
		pm.QuotaExhausted(hint)
	}
}
