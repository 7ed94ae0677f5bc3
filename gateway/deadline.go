package gateway

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A request's deadline: the earliest of timeouts.total and the client's own
// timeout, less a margin, so that the gateway answers before the client
// gives up. No attempt starts past it, and each attempt's clock ends at it.

// DeadlineMargin is the least time a request's deadline keeps before the
// client's own timeout (SEMANTICS §7.3: 5% of it, at least this much).
const DeadlineMargin = 100 * time.Millisecond

// deadlineContext is a request's context stating the request's deadline
// (SEMANTICS §7.3) without a timer of its own: the retry ladder reads it
// (it never waits past it), each attempt's clock cancels its attempt at it
// (with context.DeadlineExceeded, as a context with that deadline would),
// and the attempt loop starts no attempt past it. Done and Err are the
// request's: they do not end at the deadline.
type deadlineContext struct {
	context.Context
	deadline time.Time
}

// Deadline returns the earlier of the request's deadline and its parent's.
func (c *deadlineContext) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// ended reports whether the request has ended: its context, or its
// deadline passed.
func (c *deadlineContext) ended() bool {
	d, _ := c.Deadline()
	return c.Err() != nil || !time.Now().Before(d)
}

// deadline returns the request's deadline: the earliest of timeouts.total
// and the client's own timeout when the request states it
// (X-Stainless-Timeout, in seconds, as the official SDKs send it, or
// x-loopctl-timeout, in seconds or as a Go duration), less the margin.
func (g *Gateway) deadline(r *http.Request, start time.Time) time.Time {
	d := g.limits.total
	for _, h := range [...]string{"X-Stainless-Timeout", "X-Loopctl-Timeout"} {
		if c, ok := clientTimeout(r.Header.Get(h)); ok && c < d {
			d = c
		}
	}
	margin := max(d/20, DeadlineMargin)
	if margin >= d {
		margin = d / 2
	}
	return start.Add(d - margin)
}

// clientTimeout parses a client's timeout header: seconds (decimals
// allowed) or a Go duration; false for a missing, unparsable or
// non-positive value.
func clientTimeout(v string) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f <= 0 || f > 1e9 {
			return 0, false
		}
		return time.Duration(f * float64(time.Second)), true
	}
	d, err := time.ParseDuration(v)
	return d, err == nil && d > 0
}

// attemptContext bounds an attempt: by the request's deadline, and a probe
// by its lease (on the breaker's clock).
func (x *exchange) attemptContext(ctx context.Context, tk ticket) (context.Context, context.CancelFunc) {
	if dl, ok := tk.fallback.Deadline(); ok {
		return context.WithTimeout(ctx, dl.Sub(x.g.now()))
	}
	return ctx, func() {}
}

// clientGone reports whether the client went away: its request's context
// ended, or reached its own deadline. The attempt's clock enforces that
// deadline too (it is the request's when it is the earliest), and its
// timer may cut the attempt a moment before the context's own timer ends
// the request: that is the client's timeout, not a failure of the model.
func (x *exchange) clientGone() bool {
	ctx := x.r.Context()
	if ctx.Err() != nil {
		return true
	}
	d, ok := ctx.Deadline()
	return ok && !time.Now().Before(d)
}
