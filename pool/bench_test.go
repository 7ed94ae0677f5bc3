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
