package fleet

import (
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/internal/redistest"
)

// BenchmarkMemberDisabled is the read on every request's path: a watched
// member's Disabled (one with a disable in force among eight watched, and
// one without), and Any. No round trip, no allocation.
func BenchmarkMemberDisabled(b *testing.B) {
	srv := redistest.Start(b)
	d := startStore(b, srv, Options{Prefix: "mdbench"}).MemberDisables()
	refs := make([]string, 8)
	for i := range refs {
		refs[i] = "up" + strconv.Itoa(i) + "/m"
	}
	d.Watch(refs...)
	d.Disable(refs[3], time.Now().Add(time.Hour), "bench", "ops")
	now := time.Now()
	for _, bc := range []struct {
		name, ref string
		want      bool
	}{{"disabled", refs[3], true}, {"enabled", refs[5], false}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, _, ok := d.Disabled(bc.ref, now); ok != bc.want {
					b.Fatalf("Disabled(%s) = %v", bc.ref, ok)
				}
			}
		})
	}
	b.Run("any", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !d.Any() {
				b.Fatal("Any false with a disable in force")
			}
		}
	})
}

// BenchmarkMemberDisablePropagation: from a member's disable through one
// process until another process's mirror reads it, on a real redis-server;
// reports p50 and p99 in µs and the script calls a disable costs the store.
// Each iteration enables the member first (untimed).
func BenchmarkMemberDisablePropagation(b *testing.B) {
	srv := redistest.Start(b)
	p1 := startStore(b, srv, Options{Prefix: "mdprop"}).MemberDisables()
	p2 := startStore(b, srv, Options{Prefix: "mdprop"}).MemberDisables()
	p2.Watch("up/m")
	wait := func(on bool) {
		for end := time.Now().Add(5 * time.Second); ; {
			if _, _, _, ok := p2.Disabled("up/m", time.Now()); ok == on {
				return
			}
			if time.Now().After(end) {
				b.Fatalf("the other process did not read disabled=%v within 5s", on)
			}
			runtime.Gosched() // the watcher's goroutine delivers the message
		}
	}
	var (
		delays []time.Duration
		calls  int64
	)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		p1.Enable("up/m")
		wait(false)
		before := scriptCalls(b, srv)
		b.StartTimer()
		start := time.Now()
		p1.Disable("up/m", start.Add(time.Hour), "INC-42", "ops")
		wait(true)
		delays = append(delays, time.Since(start))
		b.StopTimer()
		calls += scriptCalls(b, srv) - before
		b.StartTimer()
	}
	reportPropagation(b, delays, calls, "scripts/disable")
}
