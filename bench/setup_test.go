package bench

// Setups shared by the benchmarks and the sanity tests. Every library gets
// the same configuration, translated into its own vocabulary:
//
//   - it trips after 3 consecutive failures;
//   - it stays open for a 30s cooldown (benchmarks of the open path never
//     reach the end of it);
//   - half-open admits exactly one probe;
//   - a closed-path call runs a function that returns nil at once.
//
// A breaker is always opened the same way: by three failed calls through the
// library's own API (never by forcing the state), so that each benchmark
// measures the state the library reaches in normal use.
//
// The half-open setups use a cooldown of 1ns so that the very next gate call
// after the trip is granted the probe, without sleeping; the probe is then
// held (never settled) for the whole benchmark. loopctl's probe lease is set
// to an hour so that it stays live.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"

	eapache "github.com/eapache/go-resiliency/breaker"
	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"
)

const (
	threshold = 3
	cooldown  = 30 * time.Second
	// probeGrantTries bounds the loops that wait for a 1ns cooldown to pass.
	probeGrantTries = 1 << 20
)

var errFail = errors.New("bench: tool failed")

// Functions passed to the libraries: package-level so that passing them
// allocates nothing for anyone.
func okCtx(context.Context) (int, error) { return 1, nil }
func ok() (int, error)                   { return 1, nil }
func okErr() error                       { return nil }
func failCtx(context.Context) (int, error) {
	return 0, errFail
}
func fail() (int, error) { return 0, errFail }
func failErr() error     { return errFail }

// ---- loopctl ----

func newLoopctl(tb testing.TB, recovery, lease time.Duration) *breaker.Breaker {
	tb.Helper()
	b, err := breaker.New(breaker.Settings{
		Name:             "bench",
		FailureThreshold: threshold,
		RecoveryDuration: recovery,
		ProbeTimeout:     lease,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func tripLoopctl(tb testing.TB, b *breaker.Breaker) {
	tb.Helper()
	for range threshold {
		p, err := b.Allow()
		if err != nil {
			tb.Fatalf("loopctl: refused while tripping: %v", err)
		}
		p.Failure()
	}
}

func loopctlClosed(tb testing.TB) *breaker.Breaker {
	return newLoopctl(tb, cooldown, cooldown)
}

// loopctlBackoffClosed is loopctlClosed with repeated trips backing off
// (RecoveryBackoff 2, capped at 10 cooldowns) and a slow probe failing
// (SlowCallAfter 1s): the settings of issue 34's brownout runs.
func loopctlBackoffClosed(tb testing.TB) *breaker.Breaker {
	tb.Helper()
	b, err := breaker.New(breaker.Settings{
		Name:               "bench",
		FailureThreshold:   threshold,
		RecoveryDuration:   cooldown,
		ProbeTimeout:       cooldown,
		RecoveryBackoff:    2,
		MaxRecoveryTimeout: 10 * cooldown,
		SlowCallAfter:      time.Second,
	})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func loopctlOpen(tb testing.TB) *breaker.Breaker {
	b := newLoopctl(tb, cooldown, cooldown)
	tripLoopctl(tb, b)
	return b
}

// loopctlHalfOpen returns a breaker whose probe is in flight (held by the
// returned permit, which is cancelled at cleanup).
func loopctlHalfOpen(tb testing.TB) *breaker.Breaker {
	tb.Helper()
	b := newLoopctl(tb, time.Nanosecond, time.Hour)
	tripLoopctl(tb, b)
	for range probeGrantTries {
		p, err := b.Allow()
		if err != nil {
			continue // cooldown not yet over: a refusal changes nothing
		}
		if !p.IsProbe() {
			tb.Fatal("loopctl: first permit after the cooldown is not the probe")
		}
		tb.Cleanup(p.Cancel)
		return b
	}
	tb.Fatal("loopctl: probe never granted")
	return nil
}

// ---- gobreaker v2 ----

func gobreakerSettings(timeout time.Duration) gobreaker.Settings {
	return gobreaker.Settings{
		Name:        "bench",
		MaxRequests: 1, // one probe in half-open
		Timeout:     timeout,
		ReadyToTrip: func(c gobreaker.Counts) bool { return c.ConsecutiveFailures >= threshold },
	}
}

func gobreakerExecClosed(testing.TB) *gobreaker.CircuitBreaker[int] {
	return gobreaker.NewCircuitBreaker[int](gobreakerSettings(cooldown))
}

func tripGobreakerExec(tb testing.TB, cb *gobreaker.CircuitBreaker[int]) {
	tb.Helper()
	for range threshold {
		if _, err := cb.Execute(fail); !errors.Is(err, errFail) {
			tb.Fatalf("gobreaker: tripping call returned %v", err)
		}
	}
}

func gobreakerExecOpen(tb testing.TB) *gobreaker.CircuitBreaker[int] {
	cb := gobreaker.NewCircuitBreaker[int](gobreakerSettings(cooldown))
	tripGobreakerExec(tb, cb)
	return cb
}

// gobreakerExecHalfOpen holds the probe in a goroutine blocked inside
// Execute: Execute has no other way to keep a request in flight. The
// goroutine is released and waited for at cleanup.
func gobreakerExecHalfOpen(tb testing.TB) *gobreaker.CircuitBreaker[int] {
	tb.Helper()
	cb := gobreaker.NewCircuitBreaker[int](gobreakerSettings(time.Nanosecond))
	tripGobreakerExec(tb, cb)
	inFlight := make(chan struct{})
	release := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range probeGrantTries {
			_, err := cb.Execute(func() (int, error) {
				close(inFlight)
				<-release
				return 1, nil
			})
			if err == nil {
				return
			}
		}
	}()
	select {
	case <-inFlight:
	case <-done:
		tb.Fatal("gobreaker: probe never granted")
	}
	tb.Cleanup(func() { close(release); <-done })
	return cb
}

func gobreakerTwoStepClosed(testing.TB) *gobreaker.TwoStepCircuitBreaker[int] {
	return gobreaker.NewTwoStepCircuitBreaker[int](gobreakerSettings(cooldown))
}

func tripGobreakerTwoStep(tb testing.TB, cb *gobreaker.TwoStepCircuitBreaker[int]) {
	tb.Helper()
	for range threshold {
		done, err := cb.Allow()
		if err != nil {
			tb.Fatalf("gobreaker two-step: refused while tripping: %v", err)
		}
		done(errFail)
	}
}

func gobreakerTwoStepOpen(tb testing.TB) *gobreaker.TwoStepCircuitBreaker[int] {
	cb := gobreaker.NewTwoStepCircuitBreaker[int](gobreakerSettings(cooldown))
	tripGobreakerTwoStep(tb, cb)
	return cb
}

func gobreakerTwoStepHalfOpen(tb testing.TB) *gobreaker.TwoStepCircuitBreaker[int] {
	tb.Helper()
	cb := gobreaker.NewTwoStepCircuitBreaker[int](gobreakerSettings(time.Nanosecond))
	tripGobreakerTwoStep(tb, cb)
	for range probeGrantTries {
		done, err := cb.Allow()
		if err == nil {
			tb.Cleanup(func() { done(nil) })
			return cb
		}
	}
	tb.Fatal("gobreaker two-step: probe never granted")
	return nil
}

// ---- failsafe-go ----

// failsafeBreaker is count based: it opens when the last 3 executions all
// failed (the same as 3 consecutive failures) and lets one probe through in
// half-open (success threshold 1).
func failsafeBreaker(delay time.Duration) circuitbreaker.CircuitBreaker[int] {
	return circuitbreaker.NewBuilder[int]().
		WithFailureThreshold(threshold).
		WithSuccessThreshold(1).
		WithDelay(delay).
		Build()
}

func tripFailsafe(tb testing.TB, cb circuitbreaker.CircuitBreaker[int]) {
	tb.Helper()
	for range threshold {
		if !cb.TryAcquirePermit() {
			tb.Fatal("failsafe: refused while tripping")
		}
		cb.RecordError(errFail)
	}
}

func tripFailsafeExecutor(tb testing.TB, ex failsafe.Executor[int]) {
	tb.Helper()
	for range threshold {
		if _, err := ex.Get(fail); !errors.Is(err, errFail) {
			tb.Fatalf("failsafe executor: tripping call returned %v", err)
		}
	}
}

func failsafeClosed(testing.TB) circuitbreaker.CircuitBreaker[int] {
	return failsafeBreaker(cooldown)
}

func failsafeOpen(tb testing.TB) circuitbreaker.CircuitBreaker[int] {
	cb := failsafeBreaker(cooldown)
	tripFailsafe(tb, cb)
	return cb
}

func failsafeHalfOpen(tb testing.TB) circuitbreaker.CircuitBreaker[int] {
	tb.Helper()
	cb := failsafeBreaker(time.Nanosecond)
	tripFailsafe(tb, cb)
	acquireFailsafeProbe(tb, cb)
	return cb
}

func acquireFailsafeProbe(tb testing.TB, cb circuitbreaker.CircuitBreaker[int]) {
	tb.Helper()
	for range probeGrantTries {
		if cb.TryAcquirePermit() {
			tb.Cleanup(cb.RecordSuccess)
			return
		}
	}
	tb.Fatal("failsafe: probe never granted")
}

type failsafeExecutor = failsafe.Executor[int]

// The executor variants build the executor once (as a user holding one
// would) and trip the breaker through it.

func failsafeExecClosed(testing.TB) (failsafe.Executor[int], circuitbreaker.CircuitBreaker[int]) {
	cb := failsafeBreaker(cooldown)
	return failsafe.With[int](cb), cb
}

func failsafeExecOpen(tb testing.TB) (failsafe.Executor[int], circuitbreaker.CircuitBreaker[int]) {
	cb := failsafeBreaker(cooldown)
	ex := failsafe.With[int](cb)
	tripFailsafeExecutor(tb, ex)
	return ex, cb
}

// failsafeExecHalfOpen: the executor's gate is the breaker's
// TryAcquirePermit, so the probe is taken on the breaker itself and the
// executor then refuses every call.
func failsafeExecHalfOpen(tb testing.TB) (failsafe.Executor[int], circuitbreaker.CircuitBreaker[int]) {
	cb := failsafeBreaker(time.Nanosecond)
	ex := failsafe.With[int](cb)
	tripFailsafeExecutor(tb, ex)
	acquireFailsafeProbe(tb, cb)
	return ex, cb
}

// ---- eapache/go-resiliency ----
//
// eapache has no probe slot: in half-open it lets every caller through, so
// it has no half-open contention benchmark. Its open state ends by a timer
// goroutine (time.Sleep(timeout)) that it starts on every trip; with a 30s
// timeout those goroutines are still asleep when the benchmark ends.

func eapacheClosed(testing.TB) *eapache.Breaker {
	return eapache.New(threshold, 1, cooldown)
}

func eapacheOpen(tb testing.TB) *eapache.Breaker {
	tb.Helper()
	b := eapache.New(threshold, 1, cooldown)
	for range threshold {
		if err := b.Run(failErr); !errors.Is(err, errFail) {
			tb.Fatalf("eapache: tripping call returned %v", err)
		}
	}
	return b
}
