package pool_test

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

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
// rendezvous home over 8 members.
func BenchmarkChooseSession(b *testing.B) {
	f := newFixture(b, equal(8), nil)
	now := f.c.Now()
	s := pool.SessionOf("conversation-1")
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var r pool.Request
		a, err := f.p.Choose(now, &r, pool.Need{Session: s, Stream: true})
		if err != nil {
			b.Fatal(err)
		}
		a.Success(now)
	}
}

// BenchmarkChooseOnly measures the choice alone (each attempt settled
// outside the timer is not possible without stopping it, so half the
// members carry 16 attempts in flight and the choice's slot is released).
func BenchmarkChooseOnly(b *testing.B) {
	f := newFixture(b, equal(8), nil)
	now := f.c.Now()
	for range 64 {
		var r pool.Request
		f.choose(b, &r, pool.Need{})
	}
	b.ReportAllocs()
	for b.Loop() {
		var r pool.Request
		a, err := f.p.Choose(now, &r, pool.Need{Session: pool.SessionOf("k")})
		if err != nil {
			b.Fatal(err)
		}
		a.Cancel(now)
	}
}

// BenchmarkChoiceOnly times Choose alone with 8 members: 256 choices (32 in flight per member at most) are
// timed, then settled with the timer stopped.
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
