package retry

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Jitter selects how [Policy.Delay] randomises the exponential base delay.
type Jitter int

const (
	// FullJitter waits d·r: anywhere in [0, d). It spreads competing
	// clients best and is the default.
	FullJitter Jitter = iota
	// ProportionalJitter waits d·(1 + f·(2r − 1)): within ±f of d, where f
	// is Policy.JitterFactor (loopctl's own ladder uses ±10%).
	ProportionalJitter
)

// String returns "full" or "proportional" ("Jitter(n)" for any other value).
func (j Jitter) String() string {
	switch j {
	case FullJitter:
		return "full"
	case ProportionalJitter:
		return "proportional"
	}
	return "Jitter(" + strconv.Itoa(int(j)) + ")"
}

// Defaults used for the zero values of [Policy] fields.
const (
	DefaultMaxRetries        = 3
	DefaultBaseDelay         = 100 * time.Millisecond
	DefaultMaxDelay          = 10 * time.Second
	DefaultJitterFactor      = 0.1
	DefaultRateLimitRetries  = 3
	DefaultRateLimitDelay    = 5 * time.Second
	DefaultMaxRateLimitDelay = 60 * time.Second
)

// ErrInvalidPolicy is matched (errors.Is) by every error [Policy.Validate]
// returns, and so by [Do]'s error for an invalid policy.
var ErrInvalidPolicy = errors.New("retry: invalid policy")

// Policy configures [Do]. It is a plain value: the zero Policy is loopctl's
// default ladder (3 transient retries with full jitter from 100ms up to 10s;
// 3 rate-limited retries honouring the hint up to 60s, else 5s; no
// failover, no total rate-limit cap).
// Every field's zero value means its default.
type Policy struct {
	// MaxRetries is the number of transient retries (MaxRetries+1 attempts
	// when only transient errors occur). 0: 3 retries (4 attempts);
	// negative: no transient retries at all.
	MaxRetries int

	// BaseDelay is the base of the exponential backoff: retry a (0-based)
	// has the base min(BaseDelay·2^a, MaxDelay). 0: 100ms. Negative is
	// invalid.
	BaseDelay time.Duration

	// MaxDelay caps the exponential base. 0: 10s. Negative, or smaller than
	// BaseDelay (after defaults), is invalid. The cap applies to the base:
	// full jitter never waits more than MaxDelay; proportional jitter waits
	// at most MaxDelay·(1+JitterFactor).
	MaxDelay time.Duration

	// Jitter selects the randomisation. Zero: FullJitter. Values other than
	// FullJitter and ProportionalJitter are invalid.
	Jitter Jitter

	// JitterFactor is ProportionalJitter's ±factor f, in [0, 1]. 0: 0.1
	// (±10%). Ignored under FullJitter; outside [0, 1] (or NaN) is invalid.
	JitterFactor float64

	// RateLimitRetries is the number of rate-limited retries: the
	// (RateLimitRetries+1)-th rate-limited response escalates with an
	// *EscalationError. 0: 3 (the 4th 429 escalates). Negative is invalid.
	RateLimitRetries int

	// RateLimitDelay is the wait after a rate-limited response that gives
	// no Retry-After hint (or a hint of 0). 0: 5s. Negative is invalid.
	// It is capped by MaxRateLimitDelay too.
	RateLimitDelay time.Duration

	// MaxRateLimitDelay caps every rate-limit wait, hinted or not.
	// 0: 60s. Negative is invalid.
	MaxRateLimitDelay time.Duration

	// Failover says that another model is usable for this turn (SEMANTICS
	// §7.1): the first rate-limited answer of any kind (Throttle,
	// Quota, Overload) escalates at once with an *EscalationError, without
	// waiting, and the first timeout ([IsTimeout]) is returned at once, not
	// retried. Other transient errors (5xx, connection refused or reset)
	// keep their transient retries. false: the ladder of §4.
	Failover bool

	// RateLimitWait caps the total time Do waits out rate limits (the waits
	// of the rate-limit budget, each already capped by MaxRateLimitDelay):
	// a rate-limit wait that would take the total past it escalates with an
	// *EscalationError instead. Overload answers wait the transient backoff
	// and are not counted. 0: no cap. Negative is invalid.
	RateLimitWait time.Duration

	// Rand returns the random draw r in [0, 1) for each transient retry;
	// values outside are clamped (see Delay). It must be safe for
	// concurrent use if the Policy is shared. nil: math/rand/v2.Float64.
	Rand func() float64

	// OnRetry, if not nil, is called once before each wait that will
	// happen (not for a retry that the context's deadline cancels), with
	// the attempt that just failed and the wait. It runs on Do's goroutine.
	OnRetry func(Attempt)

	// Budget, if not nil, is asked before each retry that will happen (a
	// transient retry or a rate-limited wait; never for the first attempt):
	// it spends one token of a retry budget and reports whether the retry
	// may be made (SEMANTICS §8.3). false: no retry, Do returns the
	// last attempt's error at once, as when the retries are spent. Set it to
	// the model breaker's fallback.Turn.Retry of the attempt's ticket. It
	// runs on Do's goroutine, before OnRetry. nil: no budget.
	Budget func() bool
}

// Attempt describes a failed attempt that [Do] is about to retry; it is
// passed to Policy.OnRetry.
type Attempt struct {
	// Number is the 1-based number of the attempt that just failed,
	// counting every attempt (transient and rate-limited).
	Number int
	// Err is the attempt's error.
	Err error
	// Delay is the wait before the next attempt.
	Delay time.Duration
}

// Validate reports whether p is usable: it returns an error naming the
// first offending field (matching [ErrInvalidPolicy]) or nil. Negative
// durations, a negative RateLimitRetries, a JitterFactor outside [0, 1], a
// BaseDelay above MaxDelay (after defaults) and an unknown Jitter are
// invalid. A negative MaxRetries is valid (no transient retries).
func (p Policy) Validate() error {
	switch {
	case p.BaseDelay < 0:
		return invalid("BaseDelay must not be negative (got %v)", p.BaseDelay)
	case p.MaxDelay < 0:
		return invalid("MaxDelay must not be negative (got %v)", p.MaxDelay)
	case p.RateLimitDelay < 0:
		return invalid("RateLimitDelay must not be negative (got %v)", p.RateLimitDelay)
	case p.MaxRateLimitDelay < 0:
		return invalid("MaxRateLimitDelay must not be negative (got %v)", p.MaxRateLimitDelay)
	case p.RateLimitWait < 0:
		return invalid("RateLimitWait must not be negative (got %v)", p.RateLimitWait)
	case p.RateLimitRetries < 0:
		return invalid("RateLimitRetries must not be negative (got %d)", p.RateLimitRetries)
	case !(p.JitterFactor >= 0 && p.JitterFactor <= 1): // also rejects NaN
		return invalid("JitterFactor must be in [0, 1] (got %v)", p.JitterFactor)
	case p.Jitter != FullJitter && p.Jitter != ProportionalJitter:
		return invalid("Jitter must be FullJitter or ProportionalJitter (got %v)", p.Jitter)
	}
	if b, m := p.baseDelay(), p.maxDelay(); b > m {
		return invalid("BaseDelay (%v) must not exceed MaxDelay (%v) (zero values count as their defaults)", b, m)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidPolicy}, args...)...)
}

// Delay returns the wait before transient retry number retry (0-based) for
// the random draw r. It is pure: the same arguments always give the same
// result, and it never sleeps.
//
// The base is d = min(BaseDelay·2^retry, MaxDelay), computed without
// overflow for any retry (a negative retry counts as 0). Under FullJitter
// the wait is d·r; under ProportionalJitter it is d·(1 + f·(2r − 1)) with
// f = JitterFactor. The result is truncated to whole nanoseconds and is
// never negative; it is at most MaxDelay under FullJitter and at most
// MaxDelay·(1+f) under ProportionalJitter (saturating at the largest
// Duration).
//
// r is clamped into [0, 1) (NaN counts as 0). Delay does not validate p:
// a negative duration counts as its zero value (the default), a
// JitterFactor outside [0, 1] is clamped into it (NaN: the default), and an
// unknown Jitter counts as FullJitter.
func (p Policy) Delay(retry int, r float64) time.Duration {
	base, limit := p.baseDelay(), p.maxDelay()
	if base > limit {
		base = limit
	}
	if retry < 0 {
		retry = 0
	}
	// base·2^retry <= limit exactly when base <= limit>>retry.
	d := limit
	if retry < 63 && base <= limit>>uint(retry) {
		d = base << uint(retry)
	}

	switch {
	case !(r >= 0): // negative or NaN
		r = 0
	case r >= 1:
		r = math.Nextafter(1, 0)
	}

	if p.Jitter != ProportionalJitter {
		w := float64(d) * r
		if w >= float64(d) { // rounding can lift w to d (or past it)
			return d
		}
		return min(time.Duration(w), d)
	}
	f := p.jitterFactor()
	w := float64(d) * (1 + f*(2*r-1))
	if w >= math.MaxInt64 { // float64(math.MaxInt64) is 2^63
		return math.MaxInt64
	}
	if w <= 0 {
		return 0
	}
	return time.Duration(w)
}

func (p Policy) maxRetries() int {
	switch {
	case p.MaxRetries == 0:
		return DefaultMaxRetries
	case p.MaxRetries < 0:
		return 0
	}
	return p.MaxRetries
}

func (p Policy) baseDelay() time.Duration {
	if p.BaseDelay <= 0 {
		return DefaultBaseDelay
	}
	return p.BaseDelay
}

func (p Policy) maxDelay() time.Duration {
	if p.MaxDelay <= 0 {
		return DefaultMaxDelay
	}
	return p.MaxDelay
}

func (p Policy) jitterFactor() float64 {
	f := p.JitterFactor
	switch {
	case f == 0 || f != f: // zero or NaN
		return DefaultJitterFactor
	case f < 0:
		return 0
	case f > 1:
		return 1
	}
	return f
}

func (p Policy) rateLimitRetries() int {
	if p.RateLimitRetries <= 0 {
		return DefaultRateLimitRetries
	}
	return p.RateLimitRetries
}

// rateLimitDelay returns the wait after a rate-limited response with the
// given hint: the hint if positive, else RateLimitDelay; capped either way.
func (p Policy) rateLimitDelay(hint time.Duration) time.Duration {
	limit := p.MaxRateLimitDelay
	if limit <= 0 {
		limit = DefaultMaxRateLimitDelay
	}
	d := hint
	if d <= 0 {
		d = p.RateLimitDelay
		if d <= 0 {
			d = DefaultRateLimitDelay
		}
	}
	return min(d, limit)
}
