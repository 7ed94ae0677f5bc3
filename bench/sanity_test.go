package bench

// Sanity tests: every benchmark setup is in the state it claims, and stays
// there after many of the calls the benchmark makes, so that no benchmark
// can silently measure another path.

import (
	"context"
	"errors"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"

	eapache "github.com/eapache/go-resiliency/breaker"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/sony/gobreaker/v2"
)

// repeat is how many benchmark-style calls each check makes before it
// checks the state again.
const repeat = 1000

func TestLoopctlSetups(t *testing.T) {
	ctx := context.Background()
	t.Run("closed", func(t *testing.T) {
		b := loopctlClosed(t)
		for range repeat {
			p, err := b.Allow()
			if err != nil {
				t.Fatalf("Allow: %v", err)
			}
			p.Done(nil)
			if _, err := breaker.Do(ctx, b, okCtx); err != nil {
				t.Fatalf("Do: %v", err)
			}
		}
		if got := b.State(); got != breaker.Closed {
			t.Fatalf("state %v, want closed", got)
		}
	})
	for _, tc := range []struct {
		name  string
		setup func(testing.TB) *breaker.Breaker
		want  breaker.State
	}{
		{"open", loopctlOpen, breaker.Open},
		{"half-open", loopctlHalfOpen, breaker.HalfOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.setup(t)
			for range repeat {
				_, err := b.Allow()
				var oe *breaker.OpenError
				if !errors.As(err, &oe) || !errors.Is(err, breaker.ErrOpen) {
					t.Fatalf("Allow: %v, want *breaker.OpenError", err)
				}
				if oe.State != tc.want {
					t.Fatalf("refusal reports %v, want %v", oe.State, tc.want)
				}
				if _, err := breaker.Do(ctx, b, okCtx); !errors.Is(err, breaker.ErrOpen) {
					t.Fatalf("Do: %v, want ErrOpen", err)
				}
			}
			if got := b.State(); got != tc.want {
				t.Fatalf("state %v, want %v", got, tc.want)
			}
			if b.WouldAllow() {
				t.Fatal("WouldAllow is true")
			}
			inFlight := !b.Snapshot().ProbeStartedAt.IsZero()
			if inFlight != (tc.want == breaker.HalfOpen) {
				t.Fatalf("probe in flight = %v in state %v", inFlight, tc.want)
			}
		})
	}
}

func TestGobreakerSetups(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		ex, ts := gobreakerExecClosed(t), gobreakerTwoStepClosed(t)
		for range repeat {
			if _, err := ex.Execute(ok); err != nil {
				t.Fatal(err)
			}
			done, err := ts.Allow()
			if err != nil {
				t.Fatal(err)
			}
			done(nil)
		}
		if ex.State() != gobreaker.StateClosed || ts.State() != gobreaker.StateClosed {
			t.Fatalf("states %v, %v, want closed", ex.State(), ts.State())
		}
	})
	for _, tc := range []struct {
		name    string
		ex      func(testing.TB) *gobreaker.CircuitBreaker[int]
		ts      func(testing.TB) *gobreaker.TwoStepCircuitBreaker[int]
		wantErr error
		want    gobreaker.State
	}{
		{"open", gobreakerExecOpen, gobreakerTwoStepOpen, gobreaker.ErrOpenState, gobreaker.StateOpen},
		{"half-open", gobreakerExecHalfOpen, gobreakerTwoStepHalfOpen, gobreaker.ErrTooManyRequests, gobreaker.StateHalfOpen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex, ts := tc.ex(t), tc.ts(t)
			for range repeat {
				if _, err := ex.Execute(ok); err != tc.wantErr {
					t.Fatalf("Execute: %v, want %v", err, tc.wantErr)
				}
				if _, err := ts.Allow(); err != tc.wantErr {
					t.Fatalf("Allow: %v, want %v", err, tc.wantErr)
				}
			}
			if ex.State() != tc.want || ts.State() != tc.want {
				t.Fatalf("states %v, %v, want %v", ex.State(), ts.State(), tc.want)
			}
		})
	}
}

func TestFailsafeSetups(t *testing.T) {
	t.Run("closed", func(t *testing.T) {
		cb := failsafeClosed(t)
		ex, exCB := failsafeExecClosed(t)
		for range repeat {
			if !cb.TryAcquirePermit() {
				t.Fatal("refused")
			}
			cb.RecordSuccess()
			if _, err := ex.Get(ok); err != nil {
				t.Fatal(err)
			}
		}
		if !cb.IsClosed() || !exCB.IsClosed() {
			t.Fatal("not closed")
		}
	})
	for _, tc := range []struct {
		name  string
		cb    func(testing.TB) circuitbreaker.CircuitBreaker[int]
		ex    func(testing.TB) (failsafeExecutor, circuitbreaker.CircuitBreaker[int])
		state circuitbreaker.State
	}{
		{"open", failsafeOpen, failsafeExecOpen, circuitbreaker.OpenState},
		{"half-open", failsafeHalfOpen, failsafeExecHalfOpen, circuitbreaker.HalfOpenState},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cb := tc.cb(t)
			ex, exCB := tc.ex(t)
			for range repeat {
				if cb.TryAcquirePermit() {
					t.Fatal("standalone breaker allowed a call")
				}
				if _, err := ex.Get(ok); !errors.Is(err, circuitbreaker.ErrOpen) {
					t.Fatalf("executor: %v, want ErrOpen", err)
				}
			}
			if cb.State() != tc.state || exCB.State() != tc.state {
				t.Fatalf("states %v, %v, want %v", cb.State(), exCB.State(), tc.state)
			}
		})
	}
}

func TestEapacheSetups(t *testing.T) {
	c, o := eapacheClosed(t), eapacheOpen(t)
	for range repeat {
		if err := c.Run(okErr); err != nil {
			t.Fatal(err)
		}
		if err := o.Run(okErr); err != eapache.ErrBreakerOpen {
			t.Fatalf("open breaker: %v, want ErrBreakerOpen", err)
		}
	}
	if c.GetState() != eapache.Closed || o.GetState() != eapache.Open {
		t.Fatalf("states %v, %v, want closed, open", c.GetState(), o.GetState())
	}
}

func TestRegistrySetups(t *testing.T) {
	for _, n := range registrySizes {
		names := toolNames(n)
		r, g := newRegistry(t, names), newGobreakerMap(names)
		if got := len(r.Summary()); got != n {
			t.Fatalf("registry holds %d tools, want %d", got, n)
		}
		for i := range 2 * n {
			p, err := r.Allow(names[i%n])
			if err != nil {
				t.Fatal(err)
			}
			p.Done(nil)
			done, err := g.Allow(names[i%n])
			if err != nil {
				t.Fatal(err)
			}
			done(nil)
		}
		for _, name := range []string{names[0], names[n-1]} {
			s := r.Stats(name)
			if s.Calls != 2 || s.Successes != 2 || r.Status(name) != health.Healthy {
				t.Fatalf("%s: stats %+v, status %v; want 2 successful calls, healthy", name, s, r.Status(name))
			}
		}
	}
}

func TestFallbackSetups(t *testing.T) {
	for _, tc := range []struct {
		state fallback.State
		model string
	}{
		{fallback.Primary, "primary"},
		{fallback.Fallback, "backup"},
	} {
		t.Run(tc.state.String(), func(t *testing.T) {
			m := managerIn(t, tc.state)
			for range repeat {
				turn, err := m.Begin()
				if err != nil {
					t.Fatal(err)
				}
				if turn.Model() != tc.model || turn.IsProbe() {
					t.Fatalf("turn on %q (probe %v), want %q", turn.Model(), turn.IsProbe(), tc.model)
				}
				turn.Success()
			}
			if m.State() != tc.state || m.ActiveModel() != tc.model {
				t.Fatalf("state %v on %q, want %v on %q", m.State(), m.ActiveModel(), tc.state, tc.model)
			}
		})
	}
}

func TestRetryFirstTrySucceeds(t *testing.T) {
	for _, c := range retryCases(context.Background()) {
		t.Run(c.lib, func(t *testing.T) {
			call := c.call()
			for range 10 {
				v, err := call()
				if err != nil || v != 1 {
					t.Fatalf("got %d, %v; want 1, nil", v, err)
				}
			}
		})
	}
}
