package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestToolBackendEquivalence is docs/FLEET.md §2's equivalence property for
// breakers built with breaker.New and [Store.ToolBackend] (as the gateway
// builds them), with repeated trips backing off, slow probes and the member
// verdicts (SEMANTICS §9.1, §9.2, §9.3.1; FLEET rev 4): N simulated processes
// share one real redis-server, and after every step each process's breaker
// answers exactly like one local breaker.Breaker fed the same events on the
// same (virtual) clock: gate results, State, WouldAllow, RetryIn and the whole
// Snapshot (Trips, OpenUntil and Cause included).
func TestToolBackendEquivalence(t *testing.T) {
	srv := redistest.Start(t)
	seen := map[string]int{}
	for seed := range uint64(equivalenceSeeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			runBackendEquivalence(t, srv, seed, 300, seen)
		})
	}
	for _, c := range []string{"trips >= 3", "cause backoff", "cause hint", "cause quota", "a trip count read 0 after closing"} {
		if seen[c] == 0 && !t.Failed() {
			t.Errorf("no history reached %q (%v)", c, seen)
		}
	}
}

// equivalenceSeeds is how many histories TestToolBackendEquivalence runs.
var equivalenceSeeds = 16

// backendPair is a permit of a process's breaker and the reference's permit
// for the same call, with when it was granted (µs).
type backendPair struct {
	proc   int
	p, rp  breaker.Permit
	issued int64
}

// equivalenceSettings are the settings of every breaker of the test: f = 2,
// base 100ms, cap 400ms, threshold 3, lease 250ms, a slow probe after 50ms,
// with name and the virtual clock now (the reference's; the shared breakers
// read the store's).
func equivalenceSettings(name string, factor float64, now func() time.Time) breaker.Settings {
	return breaker.Settings{Name: name, FailureThreshold: 3, RecoveryDuration: 100 * time.Millisecond,
		ProbeTimeout: 250 * time.Millisecond, RecoveryBackoff: factor, MaxRecoveryTimeout: 400 * time.Millisecond,
		QuotaCooldown: 300 * time.Millisecond, SlowCallAfter: 50 * time.Millisecond, Now: now}
}

// runBackendEquivalence runs one history, counting in seen the situations
// it reached.
func runBackendEquivalence(t *testing.T, srv *redistest.Server, seed uint64, steps int, seen map[string]int) {
	rng := rand.New(rand.NewPCG(seed, 34))
	const n = 3
	var clock atomic.Int64 // µs
	clock.Store(1_800_000_000_000_000 + int64(seed)*1e9)
	now := func() time.Time { return time.UnixMicro(clock.Load()) }
	name := fmt.Sprint("backoff-equiv", seed)
	ref, err := breaker.New(equivalenceSettings(name, 2, now))
	if err != nil {
		t.Fatal(err)
	}
	bs := make([]*breaker.Breaker, n)
	tools := make([]*ToolBreaker, n) // each process's shared breaker, for its mirror
	var reader *Store
	for i := range bs {
		s := newFakeStore(t, srv, Options{}, clock.Load)
		st := equivalenceSettings(name, 2, nil)
		st.Backend = s.ToolBackend()
		if bs[i], err = breaker.New(st); err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		tools[i] = s.members[s.key("tool", name)+":ch"].(*ToolBreaker)
		s.mu.Unlock()
		reader = s
	}
	key := reader.key("tool", name)
	var out []backendPair
	var log []string
	var prev breaker.Snapshot
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("after steps (last 40):\n%v\n%s", log[max(0, len(log)-40):], fmt.Sprintf(format, args...))
	}
	for step := range steps {
		at := clock.Load()
		switch r := rng.IntN(100); {
		case r < 35:
			i := rng.IntN(n)
			p, err := bs[i].Allow()
			rp, rerr := ref.Allow()
			log = append(log, fmt.Sprintf("%d: p%d allow -> %v %v", step, i, err == nil, p.IsProbe()))
			if (err == nil) != (rerr == nil) || p.IsProbe() != rp.IsProbe() {
				fail("p%d Allow = %v (probe %v), reference %v (probe %v)", i, err, p.IsProbe(), rerr, rp.IsProbe())
			}
			if err != nil {
				var oe, roe *breaker.OpenError
				if !errors.As(err, &oe) || !errors.As(rerr, &roe) || oe.State != roe.State || oe.RetryIn != roe.RetryIn {
					fail("p%d refusal %v, reference %v", i, err, rerr)
				}
				break
			}
			out = append(out, backendPair{i, p, rp, at})
		case r < 75 && len(out) > 0:
			k := rng.IntN(len(out))
			pr := out[k]
			out = append(out[:k], out[k+1:]...)
			log = append(log, fmt.Sprintf("%d: p%d %s (probe %v)", step, pr.proc, settleBoth(rng, pr, at), pr.p.IsProbe()))
		case r < 78 && len(out) > 0: // a permit is lost
			k := rng.IntN(len(out))
			out = append(out[:k], out[k+1:]...)
			log = append(log, fmt.Sprintf("%d: lost", step))
		case r < 79:
			i := rng.IntN(n)
			bs[i].Reset()
			ref.Reset()
			log = append(log, fmt.Sprintf("%d: p%d reset", step, i))
		case r < 81: // every process reloads the same settings: a new factor
			f := []float64{0, 2, 3}[rng.IntN(3)]
			for _, b := range bs {
				if err := b.Reconfigure(equivalenceSettings(name, f, nil)); err != nil {
					t.Fatal(err)
				}
			}
			if err := ref.Reconfigure(equivalenceSettings(name, f, now)); err != nil {
				t.Fatal(err)
			}
			log = append(log, fmt.Sprintf("%d: reconfigure factor %v", step, f))
		default:
			d := []int64{100_000, 250_000, 400_000, 50_000, rng.Int64N(60_000), rng.Int64N(600_000)}[rng.IntN(6)]
			clock.Add(d)
			log = append(log, fmt.Sprintf("%d: +%dµs", step, d))
		}
		waitMirrors(t, reader, key, tools)
		want := ref.Snapshot()
		if want.Trips >= 3 {
			seen["trips >= 3"]++
		}
		if want.State == breaker.Open {
			seen[fmt.Sprint("cause ", want.Cause)]++
		}
		if prev.Trips > 0 && prev.State == breaker.Closed && want.Trips == 0 && !strings.Contains(log[len(log)-1], "reset") {
			seen["a trip count read 0 after closing"]++
		}
		prev = want
		for i, b := range bs {
			if got := b.Snapshot(); !sameSnapshot(got, want) {
				fail("p%d snapshot\n got %+v\nwant %+v", i, got, want)
			}
			if b.State() != ref.State() || b.WouldAllow() != ref.WouldAllow() || b.RetryIn() != ref.RetryIn() {
				fail("p%d State %v WouldAllow %v RetryIn %v; reference %v %v %v", i,
					b.State(), b.WouldAllow(), b.RetryIn(), ref.State(), ref.WouldAllow(), ref.RetryIn())
			}
		}
	}
}

// settleBoth settles pr's two permits with one random verdict at at (µs) and
// names it.
func settleBoth(rng *rand.Rand, pr backendPair, at int64) string {
	both := func(f func(p breaker.Permit)) { f(pr.p); f(pr.rp) }
	hint := func() time.Time {
		if rng.IntN(4) == 0 {
			return time.Time{}
		}
		return time.UnixMicro(at + rng.Int64N(700_000) - 50_000)
	}
	switch v := rng.IntN(14); {
	case v < 3:
		both(breaker.Permit.Success)
		return "success"
	case v < 5:
		d := []time.Duration{20 * time.Millisecond, 50 * time.Millisecond, 80 * time.Millisecond}[rng.IntN(3)]
		both(func(p breaker.Permit) { p.SuccessAfter(d) })
		return fmt.Sprint("success after ", d)
	case v < 10:
		both(breaker.Permit.Failure)
		return "failure"
	case v < 11:
		ran := time.Duration(at-pr.issued) * time.Microsecond
		both(func(p breaker.Permit) { p.TimeoutAfter(ran) })
		return fmt.Sprint("timeout after ", ran)
	case v < 12:
		both(breaker.Permit.Cancel)
		return "cancel"
	case v < 13:
		h := hint()
		both(func(p breaker.Permit) { p.RateLimited(h) })
		return fmt.Sprint("rate limited until ", h.UnixMicro()-at, "µs")
	default:
		h := hint()
		both(func(p breaker.Permit) { p.QuotaExhausted(h) })
		return fmt.Sprint("quota until ", h.UnixMicro()-at, "µs")
	}
}

// waitMirrors waits until every breaker's mirror holds the store's version.
func waitMirrors(t *testing.T, reader *Store, key string, bs []*ToolBreaker) {
	t.Helper()
	want, err := reader.client.Do(context.Background(), reader.client.B().Hget().Key(key).Field("v").Build()).AsUint64()
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range bs {
		eventually(t, 2*time.Second, fmt.Sprintf("p%d mirror reaches version %d", i, want), func() bool {
			return b.mirror.Load().v == want
		})
	}
}

// sameSnapshot compares snapshots with their times at the store's µs.
func sameSnapshot(a, b breaker.Snapshot) bool {
	us := func(t time.Time) int64 {
		if t.IsZero() {
			return 0
		}
		return t.UnixMicro()
	}
	return a.State == b.State && a.ConsecutiveFailures == b.ConsecutiveFailures && a.Trips == b.Trips &&
		a.Cause == b.Cause && us(a.LastFailure) == us(b.LastFailure) && us(a.ProbeStartedAt) == us(b.ProbeStartedAt) &&
		us(a.OpenUntil) == us(b.OpenUntil)
}
