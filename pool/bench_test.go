package pool_test

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

// The benchmarks of a choice with 8 members (the goal: ≤ 150 ns and
// 0 allocations). Each times Choose and the attempt's settlement on a warm
// pool, one path of rule 3 each; BenchmarkChoiceOnly times Choose alone.

// BenchmarkChoose measures one choice and its settlement with 8 members, no
// session (power of two choices), on a warm pool.
func BenchmarkChoose(b *testing.B) {
	f := newFixture(b, equal(8), nil)
	now := f.c.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var r pool.Request
		a, err := f.p.Choose(now, &r, pool.Need{Stream: true})
		if err != nil {
			b.Fatal(err)
		}
		a.Success(now.Add(time.Duration(i % 1000)))
	}
}

// BenchmarkChooseSession is BenchmarkChoose with a session key: the
// rendezvous home over 8 members of equal weight (the home ranks by h alone,
// with no logarithm), then its bounds.
func BenchmarkChooseSession(b *testing.B) {
	benchSession(b, equal(8))
}

// BenchmarkChooseSessionWeighted is BenchmarkChooseSession with weights 1 to
// 8: the home ranks by the score −w / ln(h) itself.
func BenchmarkChooseSessionWeighted(b *testing.B) {
	benchSession(b, []float64{1, 2, 3, 4, 5, 6, 7, 8})
}

// benchSession times Choose and Success with one session key over members of
// the given weights.
func benchSession(b *testing.B, weights []float64) {
	f := newFixture(b, weights, nil)
	now := f.c.Now()
	s := pool.SessionOf("conversation-1")
	b.ReportAllocs()
	for b.Loop() {
		var r pool.Request
		a, err := f.p.Choose(now, &r, pool.Need{Session: s, Stream: true})
		if err != nil {
			b.Fatal(err)
		}
		a.Success(now)
	}
}

// BenchmarkChooseHeadroom is BenchmarkChoose with every member's request and
// token headroom figures set (an answer of each carried them, with an ample
// remaining figure and an hour to its reset), and a token estimate on each
// request: admission checks each member's headroom (rule 5).
func BenchmarkChooseHeadroom(b *testing.B) {
	f := newFixture(b, equal(8), nil)
	now := f.c.Now()
	ample := pool.Limit{Remaining: 1 << 50, Reset: now.Add(time.Hour)}
	for i := range 8 {
		var r pool.Request
		a, err := f.p.Pin(now, &r, i, pool.Need{})
		if err != nil {
			b.Fatal(err)
		}
		a.Headroom(now, pool.Headroom{Requests: ample, Tokens: ample, InputTokens: ample})
		a.Success(now)
	}
	n := pool.Need{Stream: true, Tokens: 2000, InputTokens: 500}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var r pool.Request
		a, err := f.p.Choose(now, &r, n)
		if err != nil {
			b.Fatal(err)
		}
		a.Success(now.Add(time.Duration(i % 1000)))
	}
}

// BenchmarkChooseProbe measures a choice that takes a due probe (rule 3a):
// member 5's breaker is half-open with no probe in flight, so every choice
// takes its probe (the breaker's gate under its lock, and the probe armed
// under the pool's), and the probe is cancelled, which leaves it due again.
func BenchmarkChooseProbe(b *testing.B) {
	f := newFixture(b, equal(8), nil)
	f.trip(b, 5)
	now := f.c.Advance(time.Minute)
	b.ReportAllocs()
	for b.Loop() {
		var r pool.Request
		a, err := f.p.Choose(now, &r, pool.Need{Stream: true})
		if err != nil {
			b.Fatal(err)
		}
		if !a.IsProbe() {
			b.Fatalf("chose member %d, not the due probe", a.Member())
		}
		a.Cancel(now)
	}
}

// BenchmarkChooseLoaded measures Choose and Cancel with a session key while
// 64 attempts are in flight (8 per member on average): the home's bounded
// load and every member's wait W are read.
func BenchmarkChooseLoaded(b *testing.B) {
	f := newFixture(b, equal(8), nil)
	now := f.c.Now()
	for range 64 {
		var r pool.Request
		f.choose(b, &r, pool.Need{})
	}
	s := pool.SessionOf("k")
	b.ReportAllocs()
	for b.Loop() {
		var r pool.Request
		a, err := f.p.Choose(now, &r, pool.Need{Session: s})
		if err != nil {
			b.Fatal(err)
		}
		a.Cancel(now)
	}
}

// BenchmarkChoiceOnly times Choose alone with 8 members: 256 choices (32 in
// flight per member at most) are timed, then settled with the timer stopped.
func BenchmarkChoiceOnly(b *testing.B) {
	for _, session := range []bool{false, true} {
		name := map[bool]string{false: "p2c", true: "session"}[session]
		b.Run(name, func(b *testing.B) {
			f := newFixture(b, equal(8), nil)
			now := f.c.Now()
			var n pool.Need
			if session {
				n.Session = pool.SessionOf("conversation-1")
			}
			var open [256]pool.Attempt
			var rs [256]pool.Request
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				k := i % len(open)
				a, err := f.p.Choose(now, &rs[k], n)
				if err != nil {
					b.Fatal(err)
				}
				open[k] = a
				if k == len(open)-1 {
					b.StopTimer()
					for j := range open {
						open[j].Success(now)
						rs[j] = pool.Request{}
					}
					b.StartTimer()
				}
			}
		})
	}
}

// BenchmarkSessionOf measures hashing a session key (SHA-256), which a
// caller does once per request, before its choices.
func BenchmarkSessionOf(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = pool.SessionOf("0198c3b2-7d4e-7a11-9f3c-2b5e8d1a6c40")
	}
}
