package fleet

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestModelEquivalence: N simulated processes share one model breaker on a
// real redis-server; random turns, verdicts (transient, rate-limit, cancel),
// lost tickets, chain disables (rev 4: with an end and a reason), resets,
// holds and releases (rev 4) and clock steps are applied to random
// processes, and after every step every process answers exactly like one
// real fallback.Manager (the reference: the local breaker itself, on the same
// virtual clock) fed the same events in the store's order.
func TestModelEquivalence(t *testing.T) {
	srv := redistest.Start(t)
	for seed := range uint64(4) {
		for _, chain := range [][]string{{"b", "c"}, nil} {
			t.Run(fmt.Sprint("seed", seed, "chain", len(chain)), func(t *testing.T) {
				runModelEquivalence(t, srv, seed, chain, 200)
			})
		}
	}
}

type modelPair struct {
	proc int
	t    Turn
	rt   fallback.Ticket
	at   int64 // µs, when it began
}

func runModelEquivalence(t *testing.T, srv *redistest.Server, seed uint64, chain []string, steps int) {
	rng := rand.New(rand.NewPCG(seed, uint64(len(chain))))
	const n = 3
	var clock atomic.Int64
	clock.Store(1_800_000_000_000_000 + int64(seed)*1e9)
	fake := clock.Load
	set := fallback.Settings{Primary: "a", Chain: chain, TripThreshold: 2, RecoveryTimeout: 100 * time.Millisecond,
		RecoverySuccessesNeeded: 2, MaxFailCount: 2, ProbeTimeout: 250 * time.Millisecond, QuotaCooldown: 400 * time.Millisecond,
		SlowCallAfter: time.Second}
	if seed%2 == 0 { // SEMANTICS §9.1: repeated trips back off, capped at 700 ms (and n resets after it)
		set.RecoveryBackoff, set.MaxRecoveryTimeout = []float64{2, 1.5}[seed/2%2], 700*time.Millisecond
	}
	name := fmt.Sprint("meq", seed, len(chain))
	ms := make([]*ModelBreaker, n)
	var reader *Store
	for i := range ms {
		s := newFakeStore(t, srv, Options{}, fake)
		m, err := s.Model(name, set)
		if err != nil {
			t.Fatal(err)
		}
		ms[i], reader = m, s
	}
	rs := set
	rs.Now = func() time.Time { return time.UnixMicro(clock.Load()) }
	ref, err := fallback.New(rs)
	if err != nil {
		t.Fatal(err)
	}
	key := reader.key("model", name)
	storeVersion := func() uint64 {
		p, err := reader.client.Do(context.Background(), reader.client.B().Hget().Key(key).Field("p").Build()).ToString()
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(p)
		v, _ := strconv.ParseUint(f[1], 10, 64)
		return v
	}
	var (
		out []modelPair
		log []string
	)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("after steps (last 40):\n%v\n%s", log[max(0, len(log)-40):], fmt.Sprintf(format, args...))
	}
	for step := range steps {
		switch r := rng.IntN(100); {
		case r < 35:
			i := rng.IntN(n)
			tk, err := ms[i].Begin()
			rt, rerr := ref.Begin()
			log = append(log, fmt.Sprintf("%d: p%d begin -> %q probe %v err %v", step, i, tk.Model(), tk.IsProbe(), err))
			if (err == nil) != (rerr == nil) || tk.Model() != rt.Model() || tk.IsProbe() != rt.IsProbe() {
				fail("p%d Begin = %q probe %v (%v); reference %q probe %v (%v)", i, tk.Model(), tk.IsProbe(), err, rt.Model(), rt.IsProbe(), rerr)
			}
			if err != nil {
				var e, re *fallback.ExhaustedError
				if !errors.As(err, &e) || !errors.As(rerr, &re) || e.State != re.State || !e.ProbeAt.Equal(re.ProbeAt) {
					fail("p%d exhausted %v; reference %v", i, err, rerr)
				}
				break
			}
			out = append(out, modelPair{i, tk, rt, clock.Load()})
		case r < 75 && len(out) > 0:
			k := rng.IntN(len(out))
			pr := out[k]
			out = append(out[:k], out[k+1:]...)
			switch v := rng.IntN(13); {
			case v >= 10: // rev 3: a report with a kind, a hint and a timeout
				f := fallback.Failure{Kind: []fallback.Kind{fallback.Transient, fallback.RateLimit, fallback.Quota}[rng.IntN(3)],
					Timeout: rng.IntN(2) == 0}
				if f.Timeout { // rev 4: the caller reports how long the call ran
					f.Elapsed = time.Duration(clock.Load()-pr.at) * time.Microsecond
				}
				if rng.IntN(2) == 0 {
					f.Hint = time.UnixMicro(clock.Load() + []int64{-1000, 50_000, 300_000, 2_000_000}[rng.IntN(4)])
				}
				pr.t.Fail(f)
				pr.rt.Fail(f)
				log = append(log, fmt.Sprintf("%d: p%d fail %q %+v", step, pr.proc, pr.t.Model(), f))
			case v < 2: // SEMANTICS §9.2: a probe whose first content is late re-opens
				d := []time.Duration{0, time.Second, 2 * time.Second}[rng.IntN(3)]
				pr.t.SuccessAfter(d)
				pr.rt.SuccessAfter(d)
				log = append(log, fmt.Sprintf("%d: p%d success after %v %q", step, pr.proc, d, pr.t.Model()))
			case v < 4:
				pr.t.Success()
				pr.rt.Success()
				log = append(log, fmt.Sprintf("%d: p%d success %q", step, pr.proc, pr.t.Model()))
			case v < 7:
				pr.t.Failure(fallback.Transient)
				pr.rt.Failure(fallback.Transient)
				log = append(log, fmt.Sprintf("%d: p%d transient failure %q", step, pr.proc, pr.t.Model()))
			case v < 9:
				pr.t.Failure(fallback.RateLimit)
				pr.rt.Failure(fallback.RateLimit)
				log = append(log, fmt.Sprintf("%d: p%d rate-limit failure %q", step, pr.proc, pr.t.Model()))
			default:
				pr.t.Cancel()
				pr.rt.Cancel()
				log = append(log, fmt.Sprintf("%d: p%d cancel %q", step, pr.proc, pr.t.Model()))
			}
		case r < 78 && len(out) > 0:
			k := rng.IntN(len(out))
			out = append(out[:k], out[k+1:]...)
			log = append(log, fmt.Sprintf("%d: lost", step))
		case r < 82 && len(chain) > 0:
			i, model, on := rng.IntN(n), chain[rng.IntN(len(chain))], rng.IntN(2) == 0
			if err := ms[i].SetAvailable(model, on); err != nil {
				t.Fatal(err)
			}
			_ = ref.SetAvailable(model, on)
			log = append(log, fmt.Sprintf("%d: p%d SetAvailable(%q, %v)", step, i, model, on))
		case r < 84:
			i := rng.IntN(n)
			ms[i].Reset()
			ref.Reset()
			log = append(log, fmt.Sprintf("%d: p%d Reset", step, i))
		case r < 87: // rev 4: a hold, until a time that may have passed
			i := rng.IntN(n)
			until := time.UnixMicro(clock.Load() + []int64{-50_000, 0, 100_000, 300_000, 1_000_000}[rng.IntN(5)])
			why := fmt.Sprint("INC-", step)
			ms[i].Hold(until, why)
			ref.Hold(until, why)
			log = append(log, fmt.Sprintf("%d: p%d Hold(%v, %q)", step, i, until, why))
		case r < 88:
			i := rng.IntN(n)
			ms[i].Release()
			ref.Release()
			log = append(log, fmt.Sprintf("%d: p%d Release", step, i))
		case r < 90 && len(chain) > 0: // rev 4: a disable with an end (or none)
			i, model := rng.IntN(n), chain[rng.IntN(len(chain))]
			var until time.Time
			if rng.IntN(4) != 0 {
				until = time.UnixMicro(clock.Load() + []int64{-1, 50_000, 200_000, 600_000}[rng.IntN(4)])
			}
			why := fmt.Sprint("why-", step)
			if err := ms[i].Disable(model, until, why); err != nil {
				t.Fatal(err)
			}
			_ = ref.Disable(model, until, why)
			log = append(log, fmt.Sprintf("%d: p%d Disable(%q, %v)", step, i, model, until))
		default:
			var d int64
			switch rng.IntN(4) {
			case 0:
				d = 100_000
			case 1:
				d = 250_000
			case 2:
				d = rng.Int64N(50_000)
			default:
				d = rng.Int64N(500_000)
			}
			clock.Add(d)
			log = append(log, fmt.Sprintf("%d: +%dµs", step, d))
		}
		want := storeVersion()
		for i, m := range ms {
			eventually(t, 2*time.Second, fmt.Sprintf("p%d mirror reaches version %d", i, want), func() bool {
				return m.mirror.Load().v == want
			})
		}
		rsnap := ref.Snapshot()
		for i, m := range ms {
			s := m.Snapshot()
			if s.Mode != Shared {
				fail("p%d mode %v", i, s.Mode)
			}
			if !reflect.DeepEqual(s.Snapshot, rsnap) && !(len(s.Chain) == 0 && len(rsnap.Chain) == 0 && sameBut(s.Snapshot, rsnap)) {
				fail("p%d Snapshot\n %+v\nreference\n %+v", i, s.Snapshot, rsnap)
			}
			if m.State() != ref.State() || m.ActiveModel() != ref.ActiveModel() || m.FallbackActivated() != ref.FallbackActivated() {
				fail("p%d State %v ActiveModel %q activated %v; reference %v %q %v", i, m.State(), m.ActiveModel(),
					m.FallbackActivated(), ref.State(), ref.ActiveModel(), ref.FallbackActivated())
			}
		}
	}
}

// sameBut compares snapshots with empty chains (nil and empty slices alike).
func sameBut(a, b fallback.Snapshot) bool {
	a.Chain, b.Chain = nil, nil
	return reflect.DeepEqual(a, b)
}
