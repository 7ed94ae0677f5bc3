package fleet

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// clockEstimate estimates the offset of the store's clock from the local wall
// clock (store minus local, in ns) from script replies: a reply carrying the
// store's TIME t, sent at t0 and received at t1, says the store read t at
// about (t0+t1)/2, within ±(t1-t0)/2. Samples with a round trip close to the
// smallest seen are kept (the smallest error bound); others are used only
// when no good sample came for a while. The offset serves only local
// refusals; every decision that opens or closes anything uses the store's
// clock inside the script.
type clockEstimate struct {
	offset atomic.Int64 // ns

	// fake, set only by tests before use, replaces the store's TIME (µs):
	// scripts receive it as an argument and the offset stays 0.
	fake func() int64

	mu     sync.Mutex
	minRTT time.Duration
	last   time.Time // when the last sample was kept
	has    bool
}

func (c *clockEstimate) sample(t0, t1 time.Time, storeMicros int64) {
	if c.fake != nil {
		return
	}
	rtt := t1.Sub(t0)
	mid := t0.UnixNano() + int64(rtt/2)
	off := storeMicros*1000 - mid
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.has || rtt <= c.minRTT*3/2+50*time.Microsecond || t1.Sub(c.last) > 5*time.Second {
		if !c.has || rtt < c.minRTT || t1.Sub(c.last) > 5*time.Second {
			c.minRTT = rtt
		}
		c.has, c.last = true, t1
		c.offset.Store(off)
	}
}

// storeNow returns the estimated store time now, in ns since the Unix epoch.
func (c *clockEstimate) storeNow() int64 {
	if c.fake != nil {
		return c.fake() * 1000
	}
	return time.Now().UnixNano() + c.offset.Load()
}

// arg is the script argument that overrides TIME: "" (use TIME) except in tests.
func (c *clockEstimate) arg() string {
	if c.fake != nil {
		return strconv.FormatInt(c.fake(), 10)
	}
	return ""
}

// toStore converts a local time to a store time (µs).
func (c *clockEstimate) toStore(t time.Time) int64 {
	return (t.UnixNano() + c.offset.Load()) / 1000
}

// toLocal converts a store time (µs) to a local time.
func (c *clockEstimate) toLocal(storeMicros int64) time.Time {
	return time.Unix(0, storeMicros*1000-c.offset.Load())
}
