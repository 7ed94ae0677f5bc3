package bench

// Benchmarks of the shared (fleet) tool breaker against a real redis-server
// that each benchmark starts on a free loopback port, next to the local
// breaker and to gobreaker v2's DistributedCircuitBreaker on the same Redis.
// Round trips are counted by the server (INFO commandstats and
// total_commands_processed) and reported as roundtrips/op.

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/sony/gobreaker/v2"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// fleetClient connects a client (one simulated process) to srv.
func fleetClient(tb testing.TB, srv *redistest.Server) rueidis.Client {
	tb.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr()}, DisableCache: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return c
}

// fleetTool returns a shared tool breaker on its own client and Store.
func fleetTool(tb testing.TB, srv *redistest.Server, s breaker.Settings) *fleet.ToolBreaker {
	tb.Helper()
	st, err := fleet.New(fleet.Options{Client: fleetClient(tb, srv), Prefix: "bench", StoreTimeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(st.Close)
	b, err := st.Tool(s)
	if err != nil {
		tb.Fatal(err)
	}
	<-st.Ready()
	return b
}

// scripts returns the number of scripts srv has run.
func scripts(tb testing.TB, srv *redistest.Server) int64 {
	tb.Helper()
	n, err := srv.Scripts()
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// commands returns the number of commands srv has processed before the INFO
// that reads it (which counts from then on: subtract 1 per earlier read).
func commands(tb testing.TB, srv *redistest.Server) int64 {
	tb.Helper()
	n, err := srv.Calls()
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkFleetClosedGate: Allow + Success on a closed breaker with no
// failure pending. The fleet breaker must make no round trip (checked).
func BenchmarkFleetClosedGate(b *testing.B) {
	srv := redistest.Start(b)
	local, _ := breaker.New(breaker.Settings{Name: "bench"})
	shared := fleetTool(b, srv, breaker.Settings{Name: "closed"})
	b.Run("local/serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, _ := local.Allow()
			p.Success()
		}
	})
	b.Run("fleet/serial", func(b *testing.B) {
		before := scripts(b, srv)
		b.ReportAllocs()
		for b.Loop() {
			p, err := shared.Allow()
			if err != nil {
				b.Fatal(err)
			}
			p.Success()
		}
		b.StopTimer()
		rt := scripts(b, srv) - before
		b.ReportMetric(float64(rt)/float64(b.N), "roundtrips/op")
		if rt != 0 {
			b.Fatalf("%d round trips in steady Closed", rt)
		}
	})
	viaStore, err := fleet.New(fleet.Options{Client: fleetClient(b, srv), Prefix: "benchvia", StoreTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(viaStore.Close)
	hooked, err := breaker.New(breaker.Settings{Name: "hooked", Backend: viaStore.ToolBackend()})
	if err != nil {
		b.Fatal(err)
	}
	<-viaStore.Ready()
	b.Run("breaker-with-fleet-backend/serial", func(b *testing.B) {
		before := scripts(b, srv)
		b.ReportAllocs()
		for b.Loop() {
			p, err := hooked.Allow()
			if err != nil {
				b.Fatal(err)
			}
			p.Success()
		}
		b.StopTimer()
		if rt := scripts(b, srv) - before; rt != 0 {
			b.Fatalf("%d round trips in steady Closed", rt)
		}
	})
	b.Run("local/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, _ := local.Allow()
				p.Success()
			}
		})
	})
	b.Run("fleet/parallel", func(b *testing.B) {
		before := scripts(b, srv)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				p, _ := shared.Allow()
				p.Success()
			}
		})
		b.StopTimer()
		if rt := scripts(b, srv) - before; rt != 0 {
			b.Fatalf("%d round trips in steady Closed", rt)
		}
	})
}

// BenchmarkFleetFailure: one failure reported on a closed breaker that never
// trips: exactly one round trip (one script call) each.
func BenchmarkFleetFailure(b *testing.B) {
	srv := redistest.Start(b)
	shared := fleetTool(b, srv, breaker.Settings{Name: "failure", FailureThreshold: 1 << 30})
	p, err := shared.Allow()
	if err != nil {
		b.Fatal(err)
	}
	p.Failure() // loads the script
	before := scripts(b, srv)
	b.ReportAllocs()
	for b.Loop() {
		p.Failure() // every Failure counts: one script call each
	}
	b.StopTimer()
	rt := scripts(b, srv) - before
	b.ReportMetric(float64(rt)/float64(b.N), "roundtrips/op")
	if rt != int64(b.N) {
		b.Fatalf("%d round trips for %d failures", rt, b.N)
	}
}

// BenchmarkFleetTripPropagation: from the start of the tripping failure on
// one process (client) until another process's mirror reads Open; reports
// p50 and p99 in µs. Each iteration resets the breaker first (untimed).
func BenchmarkFleetTripPropagation(b *testing.B) {
	srv := redistest.Start(b)
	set := breaker.Settings{Name: "trip", FailureThreshold: 1, RecoveryDuration: time.Hour}
	tripper, watcher := fleetTool(b, srv, set), fleetTool(b, srv, set)
	var delays []time.Duration
	for b.Loop() {
		b.StopTimer()
		tripper.Reset()
		for watcher.State() != breaker.Closed {
			runtime.Gosched()
		}
		p, _ := tripper.Allow()
		b.StartTimer()
		start := time.Now()
		p.Failure()
		for watcher.State() != breaker.Open {
			if time.Since(start) > 5*time.Second {
				b.Fatal("the trip did not propagate within 5s")
			}
			runtime.Gosched() // leave the cores to the client's reader and the server
		}
		delays = append(delays, time.Since(start))
	}
	slices.Sort(delays)
	q := func(f float64) float64 { return float64(delays[int(f*float64(len(delays)-1))].Microseconds()) }
	b.ReportMetric(q(0.50), "p50-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

// gobreakerStore is gobreaker v2's SharedDataStore on rueidis: a SET NX PX
// lock and a GET/SET of the state.
type gobreakerStore struct{ c rueidis.Client }

func (s gobreakerStore) Lock(name string) error {
	ctx := context.Background()
	err := s.c.Do(ctx, s.c.B().Set().Key(name).Value("1").Nx().PxMilliseconds(5000).Build()).Error()
	if rueidis.IsRedisNil(err) {
		return errors.New("gobreakerStore: locked")
	}
	return err
}

func (s gobreakerStore) Unlock(name string) error {
	return s.c.Do(context.Background(), s.c.B().Del().Key(name).Build()).Error()
}

func (s gobreakerStore) GetData(name string) ([]byte, error) {
	v, err := s.c.Do(context.Background(), s.c.B().Get().Key(name).Build()).AsBytes()
	if rueidis.IsRedisNil(err) {
		return nil, nil
	}
	return v, err
}

func (s gobreakerStore) SetData(name string, data []byte) error {
	return s.c.Do(context.Background(), s.c.B().Set().Key(name).Value(rueidis.BinaryString(data)).Build()).Error()
}

// BenchmarkGobreakerDistributed: gobreaker v2's DistributedCircuitBreaker on
// the same Redis, same workload: a closed call, and a failed call.
func BenchmarkGobreakerDistributed(b *testing.B) {
	srv := redistest.Start(b)
	c := fleetClient(b, srv)
	newCB := func(name string, trip uint32) *gobreaker.DistributedCircuitBreaker[struct{}] {
		cb, err := gobreaker.NewDistributedCircuitBreaker[struct{}](gobreakerStore{c}, gobreaker.Settings{
			Name: name, Timeout: time.Hour,
			ReadyToTrip: func(cn gobreaker.Counts) bool { return cn.ConsecutiveFailures >= trip },
		})
		if err != nil {
			b.Fatal(err)
		}
		return cb
	}
	closed := newCB("closed", 3)
	b.Run("closed/serial", func(b *testing.B) {
		before := commands(b, srv)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := closed.Execute(func() (struct{}, error) { return struct{}{}, nil }); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(commands(b, srv)-before-1)/float64(b.N), "roundtrips/op")
	})
	failing := newCB("failure", 1<<30)
	boom := errors.New("boom")
	b.Run("failure/serial", func(b *testing.B) {
		before := commands(b, srv)
		b.ReportAllocs()
		for b.Loop() {
			_, _ = failing.Execute(func() (struct{}, error) { return struct{}{}, boom })
		}
		b.StopTimer()
		b.ReportMetric(float64(commands(b, srv)-before-1)/float64(b.N), "roundtrips/op")
	})
}
