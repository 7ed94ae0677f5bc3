package breaker

import (
	"math"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/internal/ratewindow"
)

// rate is a breaker's failure-rate window and slow-call rule (SEMANTICS §8.1,
// §8.2). It acts only in Closed: the breaker records every verdict of Closed
// in it (one clock read each, no lock for a success) and clears it on every
// transition out of Closed and on Reset.
type rate struct {
	win       ratewindow.Window
	rule      ratewindow.Rule
	slowAfter int64 // ns; 0: no call is slow
}

// newRate returns the window s asks for, or nil when both rules are off.
func newRate(s Settings) *rate {
	slow := s.SlowCallAfter > 0 && s.SlowCallRate > 0
	if s.FailureRate == 0 && !slow {
		return nil
	}
	r := &rate{rule: ratewindow.Rule{FailureRate: s.FailureRate, MinCalls: int64(s.RateMinCalls)}}
	if r.rule.MinCalls == 0 {
		r.rule.MinCalls = ratewindow.DefaultMinCalls
	}
	if slow {
		r.rule.SlowRate, r.slowAfter = s.SlowCallRate, int64(s.SlowCallAfter)
	}
	r.win.Init(s.RateWindow) // zero: ratewindow.DefaultSpan, 30s
	return r
}

// rateBits returns the bits of Breaker.word that say a rate window is on.
func (b *Breaker) rateBits() uint64 {
	if b.rate.Load() != nil {
		return rateBit
	}
	return 0
}

// validateRate reports the first bad field of the rate window's settings.
func (s Settings) validateRate() error {
	badRate := func(r float64) bool { return math.IsNaN(r) || r < 0 || r > 1 }
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	switch {
	case badRate(s.FailureRate):
		return &SettingsError{Field: "FailureRate", Value: f(s.FailureRate), Rule: "must be within [0, 1]"}
	case s.RateWindow < 0:
		return &SettingsError{Field: "RateWindow", Value: s.RateWindow.String()}
	case s.RateMinCalls < 0:
		return &SettingsError{Field: "RateMinCalls", Value: strconv.Itoa(s.RateMinCalls)}
	case s.SlowCallAfter < 0:
		return &SettingsError{Field: "SlowCallAfter", Value: s.SlowCallAfter.String()}
	case badRate(s.SlowCallRate):
		return &SettingsError{Field: "SlowCallRate", Value: f(s.SlowCallRate), Rule: "must be within [0, 1]"}
	}
	return nil
}

// recordSuccess records a success in Closed, whose first content came ttfc
// after its start (negative: not known, not slow), and reports whether it
// trips the slow-call rule.
func (r *rate) recordSuccess(now, ttfc int64) bool {
	return r.win.Record(now, r.kind(ttfc), r.rule)
}

// kind is the window's outcome of a success whose first content came ttfc
// after its start (negative: not known, not slow).
func (r *rate) kind(ttfc int64) ratewindow.Outcome {
	if r.slowAfter > 0 && ttfc > r.slowAfter {
		return ratewindow.SlowSuccess
	}
	return ratewindow.Success
}

// slowTrip applies a slow success of p that tripped the slow-call rule: a
// counted success (§8.2: a success for every rule), then the trip, dated now,
// as on the consecutive threshold. Nothing happens if the breaker has left
// Closed meanwhile.
func (b *Breaker) slowTrip(p Permit) {
	b.mu.Lock()
	now := b.nowLocked()
	b.expire(now)
	if b.mode == mClosed {
		if b.failures > 0 {
			b.prove(p.gen)
			b.failures = 0
		}
		if !b.hasFailure || now > b.lastFailure {
			b.lastFailure = now
		}
		b.hasFailure = true
		b.trip(now)
	}
	b.unlock()
}

// ranSince returns how long ago clock offset start was (negative start: not
// timed, -1).
func (b *Breaker) ranSince(start int64) int64 {
	if start < 0 {
		return -1
	}
	return max(b.now()-start, 0)
}

// timed reports whether Do must time a call run under ctx: when ctx has a
// deadline (to date a timeout at the call's start, §8.4), when the slow-call
// rule is on (§8.2), and for a probe when SlowCallAfter is set (a slow probe
// fails, §9.2).
func (b *Breaker) timed(deadline, probe bool) bool {
	if deadline {
		return true
	}
	if probe {
		return b.slowPass.Load() > 0
	}
	r := b.rate.Load()
	return r != nil && r.slowAfter > 0
}

// durationNs converts d to nanoseconds, negative to zero.
func durationNs(d time.Duration) int64 { return max(int64(d), 0) }
