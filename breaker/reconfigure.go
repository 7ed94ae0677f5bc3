package breaker

import "strconv"

// Reconfigure applies s to b in place, as a reload that keeps the tool does
// (GATEWAY §11.5): the state, the consecutive-failure count, the last
// failure, a probe in flight and the trip count n stay, and the new numbers
// apply from the next event. The cooldown of an open breaker keeps the end
// its opening set (a new RecoveryBackoff applies from the next opening), and a
// probe in flight keeps the lease it was granted (a new ProbeTimeout applies
// from the next probe). The rate window
// (§8.1, §8.2) is kept when its settings are unchanged, and otherwise
// replaced by an empty one.
//
// Name, Now, OnStateChange and Backend stay as [New] set them: a different
// Name is an error (a [*SettingsError] for the field Name: the breaker is
// another tool's), and the other three are not read. Invalid settings are an
// error, as for New, and change nothing. With a Backend the shared state is
// reconfigured through it ([Shared.Reconfigure]).
func (b *Breaker) Reconfigure(s Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	if s.Name != b.name {
		return &SettingsError{Field: "Name", Value: strconv.Quote(s.Name),
			Rule: "must stay " + strconv.Quote(b.name) + " (Reconfigure keeps the breaker's tool)"}
	}
	if b.shared != nil {
		if err := b.shared.Reconfigure(s); err != nil {
			return err
		}
		b.mu.Lock()
		b.setNumbers(s) // the rate window and the slow probe are this process's
		b.mu.Unlock()
		return nil
	}
	b.mu.Lock()
	b.expire(b.nowLocked()) // a lapsed lease is applied first, as on every touch
	b.setNumbers(s)
	b.unlock() // publishes the rate bit, and a live lease's new end
	return nil
}

// setNumbers takes the numbers of s (validated). b.mu must be held.
func (b *Breaker) setNumbers(s Settings) {
	b.threshold = cmpOr(s.FailureThreshold, DefaultFailureThreshold)
	b.recovery = int64(cmpOr(s.RecoveryDuration, DefaultRecoveryDuration))
	b.lease = int64(cmpOr(s.ProbeTimeout, DefaultProbeTimeout))
	b.back = newBackoff(s, b.recovery)
	b.slowPass.Store(int64(s.SlowCallAfter))
	if r := newRate(s); !r.sameRule(b.rate.Load()) {
		b.rate.Store(r)
	}
}

// sameRule reports whether windows r and o (nil: off) count and trip alike.
func (r *rate) sameRule(o *rate) bool {
	if r == nil || o == nil {
		return r == o
	}
	return r.rule == o.rule && r.slowAfter == o.slowAfter && r.win.Span() == o.win.Span()
}

// cmpOr returns v, or def when v is zero.
func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
