// Package retrybudget is the retry budget of SEMANTICS §8.3: a token bucket
// fed by requests and spent by same-model retries, shared by the model
// breaker (package fallback) and the HTTP middleware (package transport).
// The model breaker's hedge budget (SEMANTICS §7.4) is a Bucket too, of its
// own: fed HedgeBudget per request, burst 10, spent by hedges.
//
// A [Bucket] holds a float64 number of tokens in one atomic word. It starts
// full. Each request adds the feed (capped at the burst), a retry spends one
// token, and with less than one token there is no retry. Feeding a full
// bucket only reads the word, so requests to a healthy model, whose bucket
// stays full, write nothing shared.
package retrybudget

import (
	"math"
	"sync/atomic"
)

// Defaults of SEMANTICS §8.3, for settings left zero.
const (
	DefaultFeed  = 0.2 // RetryBudget: tokens each request adds
	DefaultBurst = 10  // RetryBudgetBurst: the bucket's size
)

// Bucket is a retry budget. The zero Bucket is empty and off until [Bucket.Init];
// a Bucket must not be copied after first use. It is safe for concurrent use.
type Bucket struct {
	tokens atomic.Uint64 // float64 bits
	feed   atomic.Uint64 // float64 bits: tokens per request; negative: off (every retry allowed)
	burst  atomic.Uint64 // float64 bits
}

// settings returns feed and burst with their defaults applied.
func settings(feed, burst float64) (float64, float64) {
	if feed == 0 {
		feed = DefaultFeed
	}
	if !(burst > 0) {
		burst = DefaultBurst
	}
	return feed, burst
}

// Init makes b a full bucket of burst tokens fed feed tokens per request.
// feed zero means [DefaultFeed] and negative turns the budget off; burst
// zero (or negative) means [DefaultBurst]. Call it before b is shared.
func (b *Bucket) Init(feed, burst float64) {
	feed, burst = settings(feed, burst)
	b.feed.Store(math.Float64bits(feed))
	b.burst.Store(math.Float64bits(burst))
	b.tokens.Store(math.Float64bits(burst))
}

// Retune gives a bucket in use a new feed and burst (with Init's defaults):
// it keeps its tokens, capped at the new burst (a budget turned off and on
// again keeps the tokens it had). Safe while the bucket is in use; a Feed
// that races it may leave the bucket above the new burst by less than one
// request's feed, until the next Spend.
func (b *Bucket) Retune(feed, burst float64) {
	feed, burst = settings(feed, burst)
	b.burst.Store(math.Float64bits(burst))
	b.feed.Store(math.Float64bits(feed))
	for {
		old := b.tokens.Load()
		t := math.Float64frombits(old)
		if t <= burst || b.tokens.CompareAndSwap(old, math.Float64bits(burst)) {
			return
		}
	}
}

// Off reports whether the budget is off (a negative feed): [Bucket.Spend]
// always allows.
func (b *Bucket) Off() bool { return b.feedRate() < 0 }

func (b *Bucket) feedRate() float64 { return math.Float64frombits(b.feed.Load()) }

// Feed adds one request's tokens, up to the burst. A full bucket is only read.
func (b *Bucket) Feed() {
	if feed := b.feedRate(); feed > 0 {
		b.add(feed)
	}
}

// Refund gives back the token of a [Bucket.Spend] that reported true for
// something that was then not made, up to the burst. With the budget off
// (where Spend takes nothing) it does nothing.
func (b *Bucket) Refund() {
	if b.feedRate() >= 0 {
		b.add(1)
	}
}

// add adds n tokens, up to the burst. A full bucket is only read.
func (b *Bucket) add(n float64) {
	for {
		old := b.tokens.Load()
		t, burst := math.Float64frombits(old), math.Float64frombits(b.burst.Load())
		if t >= burst {
			return
		}
		if b.tokens.CompareAndSwap(old, math.Float64bits(math.Min(burst, t+n))) {
			return
		}
	}
}

// Spend takes one token for a retry and reports true, or reports false
// (taking nothing) when the bucket holds less than one: no retry. With the
// budget off it always reports true.
func (b *Bucket) Spend() bool {
	if b.feedRate() < 0 {
		return true
	}
	for {
		old := b.tokens.Load()
		t := math.Float64frombits(old)
		if t < 1 {
			return false
		}
		if b.tokens.CompareAndSwap(old, math.Float64bits(t-1)) {
			return true
		}
	}
}

// Tokens returns the tokens the bucket holds now (the burst when off).
func (b *Bucket) Tokens() float64 {
	if b.feedRate() < 0 {
		return math.Float64frombits(b.burst.Load())
	}
	return math.Float64frombits(b.tokens.Load())
}
