package gateway

import (
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// attemptClock bounds one attempt in time with a single timer: it cancels
// the attempt's context with the cause of the first bound to pass, of the
// deadline its parent context states (the request's, SEMANTICS §7.3:
// context.DeadlineExceeded, as a context with that deadline would),
// timeouts.request (the whole attempt), timeouts.first_byte (until
// firstByte is called: the response headers of a non-streaming request,
// the first content event of a stream) and, once the body has sent its
// first bytes, timeouts.idle inside each read of the body. Only time spent
// inside Read counts for idle, so a slow client is never taken for a
// silent upstream. It lives inside its result, with a timer borrowed from
// its gateway's pool (no allocation of its own).
type attemptClock struct {
	ctx      context.Context
	cancel   context.CancelCauseFunc
	timer    *clockTimer  // (mu after start) nil before start and once stopped: nothing rearms it
	timers   *clockTimers // where timer goes back
	base     time.Time    // when the attempt started
	readAt   atomic.Int64 // when the read in progress started, since base
	deadline time.Time    // the parent's deadline (zero: none)
	end      time.Time    // timeouts.request's end
	firstEnd time.Time    // timeouts.first_byte's end
	idle     time.Duration
	state    atomic.Int32 // clockFirstDone | clockInRead
	mu       sync.Mutex   // serializes rearm and stop: the last Reset follows the latest state
	seen     bool         // the body has sent bytes (the reader's own)
	body     io.ReadCloser
}

const (
	clockFirstDone = 1 << iota // firstByte was called
	clockInRead                // a read of the body is waiting, after its first bytes
)

// start derives the attempt's context from ctx and arms the clock with a
// timer from timers.
func (c *attemptClock) start(ctx context.Context, timers *clockTimers, firstByte, idle, request time.Duration) context.Context {
	c.ctx, c.cancel = context.WithCancelCause(ctx)
	now := time.Now()
	c.base, c.end, c.firstEnd, c.idle = now, now.Add(request), now.Add(firstByte), idle
	c.deadline, _ = ctx.Deadline()
	c.timers, c.timer = timers, timers.get()
	c.timer.clock.Store(c) // after every field a fire reads
	c.rearm()
	return c.ctx
}

// fire cancels the attempt with the cause of the bound that has passed; a
// late call for a bound that no longer holds re-arms the timer.
func (c *attemptClock) fire() {
	now, st := time.Now(), c.state.Load()
	switch {
	case !c.deadline.IsZero() && !now.Before(c.deadline):
		c.cancel(context.DeadlineExceeded)
	case !now.Before(c.end):
		c.cancel(errRequestTimeout)
	case st&clockFirstDone == 0 && !now.Before(c.firstEnd):
		c.cancel(errFirstByte)
	case st&clockInRead != 0 && c.idle > 0 && now.Sub(c.base)-time.Duration(c.readAt.Load()) >= c.idle:
		c.cancel(errIdle)
	default:
		c.rearm()
	}
}

// rearm sets the timer to the nearest bound that applies now. The reader
// and a late fire may rearm at once; under mu the later of the two reads
// the latest state, so no bound is lost.
func (c *attemptClock) rearm() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer == nil {
		return // released: a late fire must not keep the result alive
	}
	now, st := time.Now(), c.state.Load()
	d := c.end.Sub(now)
	if !c.deadline.IsZero() {
		d = min(d, c.deadline.Sub(now))
	}
	if st&clockFirstDone == 0 {
		d = min(d, c.firstEnd.Sub(now))
	}
	if st&clockInRead != 0 && c.idle > 0 {
		d = min(d, c.idle-(now.Sub(c.base)-time.Duration(c.readAt.Load())))
	}
	c.timer.t.Reset(max(d, 0))
}

// firstByte ends the first-byte bound.
func (c *attemptClock) firstByte() {
	c.state.Or(clockFirstDone)
	c.rearm()
}

// stop stops the timer and gives it back to its pool; the context is
// cancelled by the result's release.
func (c *attemptClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timers.put(c.timer)
		c.timer = nil
	}
}

// wrap makes the clock the reader of body (timeouts.idle inside reads).
func (c *attemptClock) wrap(body io.ReadCloser) io.ReadCloser {
	c.body = body
	return (*clockBody)(c)
}

// clockBody is an upstream body read under its attempt's clock; a read cut
// by timeouts.idle returns errIdle.
type clockBody attemptClock

func (b *clockBody) Read(p []byte) (int, error) {
	c := (*attemptClock)(b)
	if c.seen && c.idle > 0 {
		c.readAt.Store(int64(time.Since(c.base)))
		c.state.Or(clockInRead)
		c.rearm()
	}
	n, err := c.body.Read(p)
	if c.seen && c.idle > 0 {
		c.state.And(^clockInRead)
		c.rearm()
	}
	c.seen = c.seen || n > 0
	if err != nil && err != io.EOF && context.Cause(c.ctx) == errIdle {
		err = errIdle
	}
	return n, err
}

func (b *clockBody) Close() error { return b.body.Close() }

// clockTimer is a timer an attempt clock borrows from a [clockTimers]: its
// function calls the clock that holds it now. A fire that arrives after
// its clock gave it back, or one of an earlier holder's, does what a late
// fire does: the clock it reaches checks its bounds and rearms.
type clockTimer struct {
	t     *time.Timer
	clock atomic.Pointer[attemptClock]
}

func (ct *clockTimer) fire() {
	if c := ct.clock.Load(); c != nil {
		c.fire()
	}
}

// clockTimers is a gateway's pool of stopped attempt timers, so that an
// attempt allocates no timer. It is per gateway: a timer belongs to the
// time it was made in (a testing/synctest bubble has its own), and a
// gateway serves in one.
type clockTimers struct{ pool sync.Pool }

// get returns a stopped timer that calls no clock yet.
func (p *clockTimers) get() *clockTimer {
	ct, _ := p.pool.Get().(*clockTimer)
	if ct == nil {
		ct = new(clockTimer)
		ct.t = time.AfterFunc(time.Hour, ct.fire)
		ct.t.Stop()
	}
	return ct
}

// put stops ct and keeps it for the next attempt.
func (p *clockTimers) put(ct *clockTimer) {
	ct.t.Stop()
	ct.clock.Store(nil)
	p.pool.Put(ct)
}

var errIdle = errors.New("upstream sent nothing for timeouts.idle")
