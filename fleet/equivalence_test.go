package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestToolEquivalence is the property test of docs/FLEET.md §2: N simulated
// processes (each its own Store and client) share one real redis-server; a
// random sequence of gates, verdicts, lost permits and clock steps is applied
// to random processes, and after every step (once the change notifications
// have arrived) every process's breaker answers exactly like one reference
// breaker fed the same events in the store's order: gate results (grant,
// probe, refusal state and RetryIn), State, WouldAllow and Snapshot. The
// store's clock is virtual here (see newFakeStore) so boundaries are exact;
// the other tests use the store's TIME.
func TestToolEquivalence(t *testing.T) {
	srv := redistest.Start(t)
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			runEquivalence(t, srv, seed, 250)
		})
	}
}

type pair struct {
	proc int
	p    Permit
	rp   refPermit
}

func runEquivalence(t *testing.T, srv *redistest.Server, seed uint64, steps int) {
	rng := rand.New(rand.NewPCG(seed, 42))
	const (
		n     = 3
		rec   = 100_000 // µs
		lease = 250_000
		th    = 3
	)
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000 + int64(seed)*1e9)
	fake := clock.Load
	name := fmt.Sprint("equiv", seed)
	bs := make([]*ToolBreaker, n)
	var stores []*Store
	for i := range bs {
		s := newFakeStore(t, srv, Options{}, fake)
		b, err := s.Tool(breaker.Settings{Name: name, FailureThreshold: th,
			RecoveryDuration: rec * time.Microsecond, ProbeTimeout: lease * time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		bs[i], stores = b, append(stores, s)
	}
	ref := newRefTool(th, rec, lease)
	reader := stores[0]
	key := reader.key("tool", name)
	storeVersion := func() uint64 {
		v, err := reader.client.Do(context.Background(), reader.client.B().Hget().Key(key).Field("v").Build()).AsUint64()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var out []pair
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("after steps (last 40):\n%v\n%s", log[max(0, len(log)-40):], fmt.Sprintf(format, args...))
	}
	for step := range steps {
		now := clock.Load()
		switch r := rng.IntN(100); {
		case r < 40: // a gate on a random process
			i := rng.IntN(n)
			p, err := bs[i].Allow()
			rp, ok, st, wait := ref.allow(now)
			log = append(log, fmt.Sprintf("%d: p%d allow -> %v %v", step, i, err == nil, p.IsProbe()))
			if ok != (err == nil) || (ok && p.IsProbe() != (rp.probe != 0)) {
				fail("p%d Allow = %v (probe %v), reference grants %v (probe %v)", i, err, p.IsProbe(), ok, rp.probe != 0)
			}
			if !ok {
				var oe *breaker.OpenError
				want := time.Duration((wait*1000 + 999_999) / 1e6 * 1e6)
				if !errors.As(err, &oe) || oe.State != st || oe.RetryIn != want {
					fail("p%d refusal %v, reference: state %v retry in %v", i, err, st, want)
				}
				break
			}
			out = append(out, pair{i, p, rp})
		case r < 78 && len(out) > 0: // settle an outstanding permit on its process
			k := rng.IntN(len(out))
			pr := out[k]
			out = append(out[:k], out[k+1:]...)
			switch v := rng.IntN(10); {
			case v < 5:
				pr.p.Success()
				ref.success(pr.rp, now)
				log = append(log, fmt.Sprintf("%d: p%d success (probe %v)", step, pr.proc, pr.p.IsProbe()))
			case v < 7:
				pr.p.Failure()
				ref.failure(pr.rp, now)
				log = append(log, fmt.Sprintf("%d: p%d failure (probe %v)", step, pr.proc, pr.p.IsProbe()))
			case v < 9:
				pr.p.Done(context.DeadlineExceeded)
				ref.timeout(pr.rp, now)
				log = append(log, fmt.Sprintf("%d: p%d timeout (probe %v)", step, pr.proc, pr.p.IsProbe()))
			default:
				pr.p.Cancel()
				ref.cancel(pr.rp, now)
				log = append(log, fmt.Sprintf("%d: p%d cancel (probe %v)", step, pr.proc, pr.p.IsProbe()))
			}
		case r < 82 && len(out) > 0: // a permit is lost
			k := rng.IntN(len(out))
			out = append(out[:k], out[k+1:]...)
			log = append(log, fmt.Sprintf("%d: lost", step))
		default: // the clock moves: a little, to a boundary, or far
			var d int64
			switch rng.IntN(4) {
			case 0:
				d = rec
			case 1:
				d = lease
			case 2:
				d = rng.Int64N(rec / 2)
			default:
				d = rng.Int64N(2 * lease)
			}
			clock.Add(d)
			log = append(log, fmt.Sprintf("%d: +%dµs", step, d))
		}
		// wait for every mirror to reach the store's version
		want := storeVersion()
		for i, b := range bs {
			eventually(t, 2*time.Second, fmt.Sprintf("p%d mirror reaches version %d", i, want), func() bool {
				return b.mirror.Load().v == want
			})
		}
		now = clock.Load()
		view := ref.view(now)
		for i, b := range bs {
			snap := b.Snapshot()
			if snap.State != view.st || b.State() != view.st {
				fail("p%d State %v / Snapshot %v, reference %v", i, b.State(), snap.State, view.st)
			}
			if w := ref.wouldAllow(now); b.WouldAllow() != w {
				fail("p%d WouldAllow %v, reference %v", i, b.WouldAllow(), w)
			}
			if snap.ConsecutiveFailures != view.failures {
				fail("p%d failures %d, reference %d", i, snap.ConsecutiveFailures, view.failures)
			}
			if view.hasLF != !snap.LastFailure.IsZero() || (view.hasLF && snap.LastFailure.UnixMicro() != view.lf) {
				fail("p%d LastFailure %v, reference %v %d", i, snap.LastFailure, view.hasLF, view.lf)
			}
			probing := view.st == breaker.HalfOpen && view.probing
			if probing != !snap.ProbeStartedAt.IsZero() || (probing && snap.ProbeStartedAt.UnixMicro() != view.ps) {
				fail("p%d ProbeStartedAt %v, reference %v", i, snap.ProbeStartedAt, view.ps)
			}
			if snap.Generation-snap.Epoch+1 != ref.order {
				fail("p%d generation %d (epoch %d), reference %d", i, snap.Generation, snap.Epoch, ref.order)
			}
			if snap.Mode != Shared {
				fail("p%d mode %v", i, snap.Mode)
			}
		}
	}
}
