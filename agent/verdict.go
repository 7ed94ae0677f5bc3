package agent

import (
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

// FailureOf is the model breaker's verdict of a failed attempt whose error is
// err (SEMANTICS §3, §4): the retry ladder's reading of it ([retry.LimitOf])
// as the breaker's kind — a Quota is a quota, a Throttle or an Overload a rate
// limit, anything else transient — with the provider's hint. An error that is
// no rate limit and is a timeout ([retry.IsTimeout]) is a timeout that ran
// for elapsed, so that the breaker dates it at the attempt's start (§8.4); a
// rate limit is never a timeout, whatever its transport said.
//
// It is the one mapping from the ladder's kinds to the breaker's, used by the
// agent and by the gateway (which first reads a stream's error event as a
// rate limit where it says one). A caller that settles a [fallback.Ticket]
// itself passes the result to Ticket.Fail. An escalation
// ([retry.ErrRateLimitEscalation]) carries the kind of its last answer, a
// Throttle where that had none.
func FailureOf(err error, elapsed time.Duration) fallback.Failure {
	limit, hint := retry.LimitOf(err)
	f := fallback.Failure{Hint: hint}
	switch limit {
	case retry.Quota:
		f.Kind = fallback.Quota
	case retry.Throttle, retry.Overload:
		f.Kind = fallback.RateLimit
	default:
		if f.Timeout = retry.IsTimeout(err); f.Timeout {
			f.Elapsed = elapsed
		}
	}
	return f
}
