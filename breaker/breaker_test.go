package breaker

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewRejectsNegativeSettings(t *testing.T) {
	tests := []struct {
		name string
		s    Settings
		want string
	}{
		{"FailureThreshold", Settings{FailureThreshold: -1}, "breaker: FailureThreshold must not be negative (got -1)"},
		{"RecoveryDuration", Settings{RecoveryDuration: -time.Second}, "breaker: RecoveryDuration must not be negative (got -1s)"},
		{"ProbeTimeout", Settings{ProbeTimeout: -2 * time.Millisecond}, "breaker: ProbeTimeout must not be negative (got -2ms)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := New(tc.s)
			if b != nil || err == nil {
				t.Fatalf("New(%+v) = %v, %v; want an error", tc.s, b, err)
			}
			if err.Error() != tc.want {
				t.Fatalf("error %q, want %q", err, tc.want)
			}
			var se *SettingsError
			if !errors.As(err, &se) || se.Field != tc.name || !errors.Is(err, ErrInvalidSettings) {
				t.Fatalf("error %#v does not name field %s / match ErrInvalidSettings", err, tc.name)
			}
		})
	}
}

func TestZeroSettingsUseDefaults(t *testing.T) {
	c := &fakeClock{}
	b, err := New(Settings{Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	for range DefaultFailureThreshold - 1 {
		p, _ := b.Allow()
		p.Failure()
	}
	if b.State() != Closed {
		t.Fatal("tripped before the default threshold")
	}
	p, _ := b.Allow()
	p.Failure()
	if b.State() != Open {
		t.Fatal("did not trip at the default threshold")
	}
	c.Advance(DefaultRecoveryDuration - time.Millisecond)
	if b.WouldAllow() {
		t.Fatal("allowed before the default cooldown")
	}
	c.Advance(time.Millisecond)
	p, err = b.Allow()
	if err != nil || !p.IsProbe() {
		t.Fatalf("no probe after the default cooldown: %v", err)
	}
	c.Advance(DefaultProbeTimeout - time.Millisecond)
	if b.State() != HalfOpen {
		t.Fatal("lease expired before the default probe timeout")
	}
	c.Advance(time.Millisecond)
	if b.State() != Open {
		t.Fatal("lease did not expire at the default probe timeout")
	}
}

func TestDefaultClock(t *testing.T) {
	b, err := New(Settings{Name: "x", FailureThreshold: 1, RecoveryDuration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Allow()
	if err != nil {
		t.Fatal(err)
	}
	p.Failure()
	_, err = b.Allow()
	var oe *OpenError
	if !errors.As(err, &oe) || oe.RetryIn <= 59*time.Minute || oe.RetryIn > time.Hour {
		t.Fatalf("refusal %v, want RetryIn just under 1h", err)
	}
	if s := b.Snapshot(); s.LastFailure.IsZero() || time.Since(s.LastFailure) > time.Minute {
		t.Fatalf("LastFailure %v is not about now", s.LastFailure)
	}
}

func TestStateString(t *testing.T) {
	for st, want := range map[State]string{Closed: "closed", Open: "open", HalfOpen: "half-open", State(7): "State(7)"} {
		if got := st.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(st), got, want)
		}
	}
}

func TestRefusalError(t *testing.T) {
	f := newFixture(t)
	f.trip()
	f.clock.Advance(18*time.Second + 1500*time.Microsecond) // 11.9985s left
	e := f.refuse()
	const prefix = "tool temporarily unavailable: circuit breaker open"
	if want := prefix + ` for "search"; retry in 12s`; e.Error() != want {
		t.Fatalf("Error() = %q, want %q", e.Error(), want)
	}
	if e.RetryIn != 11999*time.Millisecond {
		t.Fatalf("RetryIn %v, want 11.9985s rounded up to 11.999s", e.RetryIn)
	}
	if again := f.refuse(); again != e {
		t.Fatal("an identical refusal allocated a new *OpenError")
	}
	f.clock.Advance(time.Millisecond)
	if again := f.refuse(); again == e || again.RetryIn != 11998*time.Millisecond {
		t.Fatalf("refusal after 1ms: %v", again)
	}
	f.clock.Advance(12 * time.Second)
	f.allow()
	e = f.refuse()
	if want := prefix + ` for "search" (a probe is in flight); retry in 10s`; e.Error() != want || e.State != HalfOpen {
		t.Fatalf("probe-in-flight refusal %q (state %v), want %q", e.Error(), e.State, want)
	}

	anon, _ := New(Settings{FailureThreshold: 1})
	p, _ := anon.Allow()
	p.Failure()
	_, err := anon.Allow()
	if !strings.HasPrefix(err.Error(), prefix+"; retry in ") {
		t.Fatalf("unnamed refusal %q", err)
	}
	if errors.Is(err, context.Canceled) || !errors.Is(err, ErrOpen) {
		t.Fatal("errors.Is mismatch")
	}
}

func TestRetryInRoundsUp(t *testing.T) {
	for _, tc := range []struct{ in, want int64 }{
		{-5, 0}, {0, 0}, {1, 1e6}, {999_999, 1e6}, {1e6, 1e6}, {1e6 + 1, 2e6}, {1<<63 - 1, 1<<63 - 1},
	} {
		if got := roundUpMillis(tc.in); got != tc.want {
			t.Errorf("roundUpMillis(%d) = %d, want %d", tc.in, got, tc.want)
		}
	}
	f := newFixture(t)
	f.trip()
	f.clock.Advance(testRecovery - time.Nanosecond)
	if e := f.refuse(); e.RetryIn != time.Millisecond {
		t.Fatalf("1ns left reads as %v, want 1ms", e.RetryIn)
	}
	if d := f.b.RetryIn(); d != time.Millisecond {
		t.Fatalf("Breaker.RetryIn() = %v, want 1ms", d)
	}
	f.clock.Advance(time.Nanosecond)
	if d := f.b.RetryIn(); d != 0 {
		t.Fatalf("Breaker.RetryIn() = %v once a probe may be granted", d)
	}
}

func TestCallbacksInOrderOutsideTheLock(t *testing.T) {
	c := &fakeClock{}
	var b *Breaker
	var got []string
	inCallback := false
	b, err := New(Settings{
		Name: "t", FailureThreshold: 1, RecoveryDuration: time.Second, ProbeTimeout: time.Second, Now: c.Now,
		OnStateChange: func(name string, from, to State) {
			inCallback = true
			defer func() { inCallback = false }()
			// Calling back into the breaker must not deadlock.
			_ = b.State()
			_ = b.Snapshot()
			_ = b.WouldAllow()
			_ = b.RetryIn()
			got = append(got, from.String()+"->"+to.String())
			if to == Closed {
				p, err := b.Allow() // a callback may use the gate too
				if err != nil {
					t.Errorf("Allow in callback: %v", err)
				}
				p.Failure() // re-trips: delivered after this callback returns
				got = append(got, "callback-done")
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	step := func(fn func()) {
		fn()
		if inCallback {
			t.Fatal("a call returned while its callback was still running")
		}
	}
	step(func() { p, _ := b.Allow(); p.Failure() })
	c.Advance(time.Second)
	var p Permit
	step(func() { p, _ = b.Allow() })
	c.Advance(3 * time.Second)
	step(func() { p, _ = b.Allow() }) // lease expired and cooldown passed: two changes, one call
	step(func() { p.Success() })
	want := []string{"closed->open", "open->half-open", "half-open->open", "open->half-open",
		"half-open->closed", "callback-done", "closed->open"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("callbacks %q\nwant %q", got, want)
	}
}

func TestNilCallbackIsFine(t *testing.T) {
	b, _ := New(Settings{FailureThreshold: 1})
	p, _ := b.Allow()
	p.Failure()
	if b.State() != Open {
		t.Fatal("not open")
	}
}

func TestDo(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	v, err := Do(ctx, f.b, func(context.Context) (int, error) { return 7, nil })
	if v != 7 || err != nil {
		t.Fatalf("Do = %d, %v", v, err)
	}
	boom := errors.New("boom")
	if _, err := Do(ctx, f.b, func(context.Context) (int, error) { return 0, boom }); err != boom {
		t.Fatalf("Do error %v, want boom", err)
	}
	func() {
		defer func() {
			if r := recover(); r != "kaboom" {
				t.Fatalf("recovered %v, want the re-panic", r)
			}
		}()
		_, _ = Do(ctx, f.b, func(context.Context) (int, error) { panic("kaboom") })
	}()
	f.want(Closed, 2, f.now(), zeroTime)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = Do(cctx, f.b, func(ctx context.Context) (int, error) { return 0, ctx.Err() })
	if !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	f.want(Closed, 2, f.now(), zeroTime) // cancel: no verdict
	_, _ = Do(ctx, f.b, func(context.Context) (int, error) { return 0, boom })
	called := false
	_, err = Do(ctx, f.b, func(context.Context) (int, error) { called = true; return 0, nil })
	if called || !errors.Is(err, ErrOpen) {
		t.Fatalf("Do on an open breaker: called=%v err=%v", called, err)
	}
}

func TestPureReadsChangeNothing(t *testing.T) {
	f := newFixture(t)
	f.probe()
	f.clock.Advance(testLease + testRecovery) // lease expired, a probe is due
	before := f.b.Snapshot()
	for range 3 {
		_ = f.b.State()
		_ = f.b.WouldAllow()
		_ = f.b.RetryIn()
	}
	if after := f.b.Snapshot(); after != before {
		t.Fatalf("pure reads changed %+v into %+v", before, after)
	}
	f.wantEvents()
	if !f.allow().IsProbe() {
		t.Fatal("pure reads ate the probe")
	}
}

func TestFarClock(t *testing.T) {
	c := &fakeClock{}
	b, _ := New(Settings{FailureThreshold: 1, RecoveryDuration: time.Second, Now: c.Now})
	c.Advance(150 * 365 * 24 * time.Hour) // beyond the fast path's ±136 years
	p, _ := b.Allow()
	p.Failure()
	if s := b.Snapshot(); !s.LastFailure.Equal(c.Now()) || s.State != Open {
		t.Fatalf("snapshot %+v, want open at %v", s, c.Now())
	}
	c.Advance(time.Second)
	if !b.WouldAllow() {
		t.Fatal("cooldown not measured correctly far from the epoch")
	}
}
