package retry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Limit is the kind of a rate-limited answer (SEMANTICS §4); see
// [LimitFor]. The zero value, NoLimit, means the answer was not rate-limited.
type Limit int

const (
	// NoLimit: the answer was not rate-limited.
	NoLimit Limit = iota
	// Throttle is a plain rate limit (every 429 that is neither a Quota nor
	// an Overload): it is waited out on the rate-limit budget, honouring
	// the hint, and eventually escalates.
	Throttle
	// Quota means the account's quota or billing is exhausted: it will not
	// pass by itself within seconds. It is never retried: it escalates at
	// once with its kind and hint.
	Quota
	// Overload means the provider said "no more load" (529, an
	// overloaded_error, a 503 saying overloaded). It is retried with the
	// transient backoff, and the model breaker records it as a rate limit.
	Overload
)

// String returns "none", "throttle", "quota" or "overload" ("Limit(n)" for
// any other value).
func (l Limit) String() string {
	if l >= 0 && int(l) < len(limitTexts) {
		return limitTexts[l]
	}
	return "Limit(" + strconv.Itoa(int(l)) + ")"
}

// quotaWords are the error codes and types that say the account's quota or
// billing is exhausted.
var quotaWords = [...]string{"insufficient_quota", "billing_hard_limit_reached", "billing_not_active", "quota_exceeded"}

// LimitFor returns the kind of an answer with HTTP status code and the
// provider's error type, error code and message (each "" when not given),
// by SEMANTICS §4, in this order:
//
//   - Quota: a 429 or 403 whose code or type is one of insufficient_quota,
//     billing_hard_limit_reached, billing_not_active or quota_exceeded, or a
//     429 whose type or code is RESOURCE_EXHAUSTED (a Google-style status)
//     and whose message names a quota;
//   - Overload: a 529, any answer whose type is overloaded_error, and a 503
//     whose type, code or message says "overloaded";
//   - Throttle: every other 429;
//   - NoLimit: everything else.
//
// Words are compared without regard to ASCII case. LimitFor does not
// allocate.
func LimitFor(code int, errType, errCode, message string) Limit {
	if code == http.StatusTooManyRequests || code == http.StatusForbidden {
		for _, w := range quotaWords {
			if equalFold(errType, w) || equalFold(errCode, w) {
				return Quota
			}
		}
		if code == http.StatusTooManyRequests && (equalFold(errType, "RESOURCE_EXHAUSTED") ||
			equalFold(errCode, "RESOURCE_EXHAUSTED")) && containsFold(message, "quota") {
			return Quota
		}
	}
	switch {
	case code == 529, equalFold(errType, "overloaded_error"):
		return Overload
	case code == http.StatusServiceUnavailable && (containsFold(errType, "overloaded") ||
		containsFold(errCode, "overloaded") || containsFold(message, "overloaded")):
		return Overload
	case code == http.StatusTooManyRequests:
		return Throttle
	}
	return NoLimit
}

// LimitOf returns the kind and the hint of the rate-limited answer err
// reports: those of the first [*EscalationError] or [*StatusError] in err's
// chain. A StatusError whose Limit is NoLimit gets the kind [LimitFor] gives
// for its Code, Type, ErrorCode and Message (so a hand-built StatusError{Code:
// 429} is a Throttle); an EscalationError whose Limit is NoLimit has the kind
// of the error it wraps, or Throttle. The hint is the error's Hint (zero:
// none). It returns (NoLimit, zero) when err carries no rate limit. LimitOf
// does not allocate.
func LimitOf(err error) (Limit, time.Time) {
	if err == nil {
		return NoLimit, time.Time{}
	}
	if esc, ok := errors.AsType[*EscalationError](err); ok {
		l, hint := esc.Limit, esc.Hint
		if l == NoLimit {
			if l, _ = LimitOf(esc.Err); l == NoLimit {
				l = Throttle
			}
		}
		return l, hint
	}
	if se, ok := errors.AsType[*StatusError](err); ok {
		return se.limit(), se.Hint
	}
	return NoLimit, time.Time{}
}

// limit returns e's kind: Limit, or what LimitFor says when it is NoLimit.
func (e *StatusError) limit() Limit {
	if e.Limit != NoLimit {
		return e.Limit
	}
	return LimitFor(e.Code, e.Type, e.ErrorCode, e.Message)
}

// IsTimeout reports whether err is a timeout: its chain holds
// context.DeadlineExceeded or a net.Error whose Timeout() is true, and not
// context.Canceled (the caller gave up: that is no timeout).
func IsTimeout(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}

// equalFold reports whether s equals the lower-case ASCII word w, ignoring
// ASCII case.
func equalFold(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower(s[i]) != lower(w[i]) {
			return false
		}
	}
	return true
}

// containsFold reports whether s contains the ASCII word w, ignoring ASCII
// case.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if equalFold(s[i:i+len(w)], w) {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
