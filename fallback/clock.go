package fallback

import (
	"math"
	"time"
)

// clock reads the time at most once per call, and only if needed. With
// Settings.Now it calls f; without (f nil) it reads the monotonic clock as an
// offset from the manager's epoch, which is cheaper than time.Now, and builds a
// time.Time (epoch plus offset) only when one is needed: since compares
// against the offset directly.
type clock struct {
	f     func() time.Time
	epoch *time.Time
	off   time.Duration // f nil: time since *epoch, once read
	t     time.Time
	hasT  bool
	hasO  bool
}

// now returns the call's instant.
func (c *clock) now() time.Time {
	if !c.hasT {
		if c.f != nil {
			c.t = c.f()
		} else {
			c.t = c.epoch.Add(c.offset())
		}
		c.hasT = true
	}
	return c.t
}

// offset returns the call's instant as time since *epoch (f nil only).
func (c *clock) offset() time.Duration {
	if !c.hasO {
		c.off, c.hasO = time.Since(*c.epoch), true
	}
	return c.off
}

// since returns now().Sub(t), without building now() when it can.
func (c *clock) since(t time.Time) time.Duration {
	if c.f != nil {
		return c.now().Sub(t)
	}
	// t.Sub(epoch) is exact for times built by now (both carry the same
	// monotonic base); the subtraction saturates like time.Time.Sub.
	a, b := c.offset(), t.Sub(*c.epoch)
	if b == math.MaxInt64 || b == math.MinInt64 { // t.Sub saturated: t is centuries away
		return c.now().Sub(t)
	}
	d := a - b
	if (b < 0 && d < a) || (b > 0 && d > a) {
		if b < 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}

// sinceEpoch returns the call's instant as time since *epoch, with or without
// Settings.Now: what a Turn keeps as its issue time.
func (c *clock) sinceEpoch() time.Duration {
	if c.f != nil {
		return c.now().Sub(*c.epoch)
	}
	return c.offset()
}
