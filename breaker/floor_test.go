package breaker

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// countingClock is a fake clock that counts its reads.
type countingClock struct {
	fakeClock
	reads atomic.Int64
}

func (c *countingClock) Now() time.Time { c.reads.Add(1); return c.fakeClock.Now() }

// TestClosedPathFloor has one row per sentence of docs/SEMANTICS.md §8.4 that
// concerns the tool breaker: which calls read the clock, and how a timeout is
// dated without a clock read at the gate.
func TestClosedPathFloor(t *testing.T) {
	ctx := context.Background()
	ok := func(context.Context) (int, error) { return 1, nil }
	tests := []struct {
		name  string
		mod   func(*Settings)
		run   func(b *Breaker)
		reads int64
	}{
		{"no rate window: Allow and a success in Closed read no clock", nil,
			func(b *Breaker) { p, _ := b.Allow(); p.Success() }, 0},
		{"no rate window: Allow with failures counted reads no clock", nil,
			func(b *Breaker) { _, _ = b.Allow() }, 0},
		{"no rate window: SuccessAfter reads no clock", nil,
			func(b *Breaker) { p, _ := b.Allow(); p.SuccessAfter(time.Hour) }, 0},
		{"Do without a deadline reads no clock", nil,
			func(b *Breaker) { _, _ = Do(ctx, b, ok) }, 0},
		{"Do with a deadline times the call: one read before it (a success after reads none)", nil,
			func(b *Breaker) {
				c, cancel := context.WithTimeout(ctx, time.Hour)
				defer cancel()
				_, _ = Do(c, b, ok)
			}, 1},
		{"a rate window adds one clock read per verdict", func(s *Settings) { s.FailureRate = 0.5 },
			func(b *Breaker) { p, _ := b.Allow(); p.Success() }, 1},
		{"a rate window: Allow still reads no clock", func(s *Settings) { s.FailureRate = 0.5 },
			func(b *Breaker) { _, _ = b.Allow() }, 0},
		{"RecoveryBackoff set: Allow and a success in Closed read no clock (n is touched only on a trip, §9.1)",
			func(s *Settings) { s.RecoveryBackoff, s.MaxRecoveryTimeout = 2, time.Hour },
			func(b *Breaker) { p, _ := b.Allow(); p.Success() }, 0},
		{"RecoveryBackoff set: Do without a deadline reads no clock", func(s *Settings) { s.RecoveryBackoff = 2 },
			func(b *Breaker) { _, _ = Do(ctx, b, ok) }, 0},
		{"SlowCallAfter alone (a slow probe fails, §9.2): SuccessAfter in Closed reads no clock",
			func(s *Settings) { s.SlowCallAfter = time.Second },
			func(b *Breaker) { p, _ := b.Allow(); p.SuccessAfter(time.Hour) }, 0},
		{"SlowCallAfter alone: Do in Closed without a deadline does not time the call",
			func(s *Settings) { s.SlowCallAfter = time.Second },
			func(b *Breaker) { _, _ = Do(ctx, b, ok) }, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &countingClock{}
			s := Settings{Now: c.Now}
			if tc.mod != nil {
				tc.mod(&s)
			}
			b, err := New(s)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "no rate window: Allow with failures counted reads no clock" {
				p, _ := b.Allow()
				p.Failure()
			}
			c.reads.Store(0)
			for range 10 {
				tc.run(b)
			}
			if got := c.reads.Load(); got != 10*tc.reads {
				t.Fatalf("%d clock reads in 10 runs, want %d", got, 10*tc.reads)
			}
		})
	}
}

// TestTimeoutWithoutClockAtTheGate has one row per way §8.4 dates a timeout
// without a clock read at the gate.
func TestTimeoutWithoutClockAtTheGate(t *testing.T) {
	tests := []struct {
		name string
		run  func(f *fixture)
	}{
		{"TimeoutAfter(d): dated at now − d", func(f *fixture) {
			f.clock.Advance(5 * time.Second)
			p := f.allow()
			f.clock.Advance(20 * time.Second)
			p.TimeoutAfter(20 * time.Second)
			f.want(Closed, 1, t0.Add(5*time.Second), zeroTime)
		}},
		{"TimeoutAfter with a negative duration: dated now", func(f *fixture) {
			p := f.allow()
			f.clock.Advance(20 * time.Second)
			p.TimeoutAfter(-time.Second)
			f.want(Closed, 1, f.now(), zeroTime)
		}},
		{"DoneAfter(DeadlineExceeded, d) is TimeoutAfter(d)", func(f *fixture) {
			f.clock.Advance(5 * time.Second)
			p := f.allow()
			f.clock.Advance(20 * time.Second)
			p.DoneAfter(context.DeadlineExceeded, 20*time.Second)
			f.want(Closed, 1, t0.Add(5*time.Second), zeroTime)
		}},
		{"DoneAfter: a failure is dated now, a cancel is no verdict", func(f *fixture) {
			p, q := f.allow(), f.allow()
			f.clock.Advance(20 * time.Second)
			p.DoneAfter(context.Canceled, time.Second)
			f.want(Closed, 0, zeroTime, zeroTime)
			q.DoneAfter(errors.New("boom"), 20*time.Second)
			f.want(Closed, 1, f.now(), zeroTime)
		}},
		{"Timeout without a duration: dated at the start of the permit's generation", func(f *fixture) {
			f.clock.Advance(5 * time.Second)
			p := f.allow() // the generation began at the breaker's creation
			f.clock.Advance(20 * time.Second)
			p.Timeout()
			f.want(Closed, 1, t0, zeroTime)
			f.clock.Advance(time.Second)
			q := f.allow() // the generation began at the first failure, 26s
			f.clock.Advance(10 * time.Second)
			q.Timeout()
			f.want(Closed, 2, t0.Add(25*time.Second), zeroTime)
		}},
		{"the permit's generation orders outcomes: a failure older than a counted success is stale", func(f *fixture) {
			hung := f.allow()
			f.allow().Failure() // the first failure after a clean state: a new generation
			f.clock.Advance(time.Second)
			f.allow().Success() // resets the count, proving the new generation
			f.clock.Advance(time.Second)
			hung.TimeoutAfter(2 * time.Second)
			f.want(Closed, 0, t0, zeroTime)
		}},
		{"a probe's timeout ignores the duration: dated now, or at its lease end", func(f *fixture) {
			p := f.probe()
			end, _ := p.Deadline()
			f.clock.Advance(testLease + time.Second)
			p.TimeoutAfter(time.Hour)
			f.want(Open, 4, end, zeroTime)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(newFixture(t)) })
	}
}

// TestDoTimesOnlyWithADeadline checks that Do dates a call cut by its
// deadline at the call's start, having timed it (§8.4), and that a call
// failing fast without a deadline is dated now.
func TestDoTimesOnlyWithADeadline(t *testing.T) {
	f := newFixture(t)
	f.clock.Advance(5 * time.Second)
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	_, _ = Do(ctx, f.b, func(ctx context.Context) (int, error) {
		f.clock.Advance(20 * time.Second)
		return 0, ctx.Err()
	})
	f.want(Closed, 1, t0.Add(5*time.Second), zeroTime)
}

// TestRateSettings checks the validation of the §8.1/§8.2 settings: each bad
// value is an error naming its field.
func TestRateSettings(t *testing.T) {
	tests := []struct {
		s     Settings
		field string
	}{
		{Settings{FailureRate: -0.1}, "FailureRate"},
		{Settings{FailureRate: 1.5}, "FailureRate"},
		{Settings{FailureRate: nan()}, "FailureRate"},
		{Settings{RateWindow: -time.Second}, "RateWindow"},
		{Settings{RateMinCalls: -1}, "RateMinCalls"},
		{Settings{SlowCallAfter: -time.Second}, "SlowCallAfter"},
		{Settings{SlowCallRate: 2}, "SlowCallRate"},
		{Settings{SlowCallRate: -0.1}, "SlowCallRate"},
		{Settings{SlowCallRate: nan()}, "SlowCallRate"},
		{Settings{FailureRate: 0.5, Backend: nopBackend{}}, ""}, // FLEET rev 3: the window is kept per process
		{Settings{FailureRate: 1, RateWindow: time.Second, RateMinCalls: 1, SlowCallAfter: 1, SlowCallRate: 1}, ""},
		{Settings{SlowCallAfter: time.Second, Backend: nopBackend{}}, ""}, // the slow rule is off without a rate
	}
	for _, tt := range tests {
		err := tt.s.Validate()
		var se *SettingsError
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%+v: %v, want nil", tt.s, err)
		case tt.field != "" && (!errors.As(err, &se) || se.Field != tt.field || !errors.Is(err, ErrInvalidSettings)):
			t.Errorf("%+v: %v, want a *SettingsError naming %s", tt.s, err, tt.field)
		}
	}
}

func nan() float64 { z := 0.0; return z / z }

// TestRateWindowSynctest rolls the breaker's window on the real (bubbled)
// clock: buckets roll when touched, with no goroutine, so the test's bubble
// has none to wait for.
func TestRateWindowSynctest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, err := New(Settings{FailureThreshold: 100, FailureRate: 0.5, RateWindow: 10 * time.Second, RateMinCalls: 4})
		if err != nil {
			t.Fatal(err)
		}
		settle := func(fail bool) {
			p, err := b.Allow()
			if err != nil {
				t.Fatal(err)
			}
			if fail {
				p.Failure()
			} else {
				p.Success()
			}
		}
		settle(true)
		settle(true) // 2 of 2, below the minimum
		time.Sleep(10 * time.Second)
		settle(false)
		settle(false)
		settle(true) // the first two left with their bucket: 1 of 3
		if st := b.State(); st != Closed {
			t.Fatalf("state %v, want closed (old failures rolled out)", st)
		}
		time.Sleep(9 * time.Second)
		settle(true) // 2 of 4
		if st := b.State(); st != Open {
			t.Fatalf("state %v, want open", st)
		}
	})
}
