package retry

import (
	"math"
	"testing"
	"time"
)

// below1 is the largest float64 below 1: what r >= 1 is clamped to.
var below1 = math.Nextafter(1, 0)

func TestDelay(t *testing.T) {
	const maxDur = time.Duration(math.MaxInt64)
	prop := func(f float64) Policy { return Policy{Jitter: ProportionalJitter, JitterFactor: f} }
	tests := []struct {
		name  string
		p     Policy
		retry int
		r     float64
		want  time.Duration
	}{
		// Full jitter (the default): d·r with d = min(100ms·2^retry, 10s).
		{"full retry0", Policy{}, 0, 0.5, 50 * time.Millisecond},
		{"full retry1", Policy{}, 1, 0.5, 100 * time.Millisecond},
		{"full retry2", Policy{}, 2, 0.5, 200 * time.Millisecond},
		{"full retry6 below cap", Policy{}, 6, 0.5, 3200 * time.Millisecond},
		{"full retry7 capped", Policy{}, 7, 0.5, 5 * time.Second},
		{"full retry 62", Policy{}, 62, 0.5, 5 * time.Second},
		{"full retry 63", Policy{}, 63, 0.5, 5 * time.Second},
		{"full retry 64", Policy{}, 64, 0.5, 5 * time.Second},
		{"full retry MaxInt", Policy{}, math.MaxInt, 0.5, 5 * time.Second},
		{"negative retry is 0", Policy{}, -1, 0.5, 50 * time.Millisecond},
		{"MinInt retry is 0", Policy{}, math.MinInt, 0.5, 50 * time.Millisecond},
		{"r 0", Policy{}, 3, 0, 0},
		{"r negative", Policy{}, 3, -0.5, 0},
		{"r -Inf", Policy{}, 3, math.Inf(-1), 0},
		{"r NaN", Policy{}, 3, math.NaN(), 0},
		{"r 1 clamps below 1", Policy{}, 100, 1, time.Duration(float64(10*time.Second) * below1)},
		{"r +Inf clamps below 1", Policy{}, 100, math.Inf(1), time.Duration(float64(10*time.Second) * below1)},
		{"r just below 1 stays below cap", Policy{}, 100, below1, 10*time.Second - 1},
		{"r 0.25 exact", Policy{BaseDelay: time.Second, MaxDelay: time.Minute}, 2, 0.25, time.Second},
		{"truncated to ns", Policy{BaseDelay: 3}, 0, 0.5, 1},
		{"custom base and cap", Policy{BaseDelay: time.Second, MaxDelay: 5 * time.Second}, 3, 0.5, 2500 * time.Millisecond},
		{"base equals cap", Policy{BaseDelay: time.Second, MaxDelay: time.Second}, 0, 0.5, 500 * time.Millisecond},
		{"huge base and cap", Policy{BaseDelay: maxDur, MaxDelay: maxDur}, 5, 0.5, maxDur/2 + 1},
		{"huge cap, 1ns base, retry 62", Policy{BaseDelay: 1, MaxDelay: maxDur}, 62, 0.5, 1 << 61},
		{"huge cap, 1ns base, retry 63", Policy{BaseDelay: 1, MaxDelay: maxDur}, 63, 0.5, maxDur/2 + 1},
		{"huge cap, r→1, no overflow", Policy{BaseDelay: 1, MaxDelay: maxDur}, 1000, 1, maxDur - 1023},
		// Delay does not validate: nonsense fields fall back as documented.
		{"negative base is default", Policy{BaseDelay: -time.Second}, 0, 0.5, 50 * time.Millisecond},
		{"negative cap is default", Policy{MaxDelay: -time.Second}, 100, 0.5, 5 * time.Second},
		{"base above cap is the cap", Policy{BaseDelay: time.Minute, MaxDelay: time.Second}, 0, 0.5, 500 * time.Millisecond},
		{"unknown jitter is full", Policy{Jitter: 7}, 0, 0.5, 50 * time.Millisecond},

		// Proportional jitter: d·(1 + f·(2r−1)).
		{"prop r 0.5 is d", prop(0), 0, 0.5, 100 * time.Millisecond},
		{"prop default f, r 0", prop(0), 0, 0, 90 * time.Millisecond},
		{"prop default f, r 0 retry1", prop(0), 1, 0, 180 * time.Millisecond},
		{"prop f 0.5 r 0", prop(0.5), 0, 0, 50 * time.Millisecond},
		{"prop f 0.5 r 0.25", prop(0.5), 0, 0.25, 75 * time.Millisecond},
		{"prop f 0.5 r 0.75", prop(0.5), 0, 0.75, 125 * time.Millisecond},
		{"prop above MaxDelay by f", prop(0.5), 100, 0.75, 12500 * time.Millisecond},
		{"prop r NaN is 0", prop(0.5), 0, math.NaN(), 50 * time.Millisecond},
		{"prop r 2 clamps", prop(0.5), 100, 2, time.Duration(float64(10*time.Second) * (1 + 0.5*(2*below1-1)))},
		{"prop f 1 r 0 is 0", prop(1), 4, 0, 0},
		{"prop f 1 r→1 near 2d", prop(1), 0, below1, 200*time.Millisecond - 1},
		{"prop f 1 huge saturates", Policy{Jitter: ProportionalJitter, JitterFactor: 1, BaseDelay: maxDur, MaxDelay: maxDur}, 3, below1, maxDur},
		{"prop f above 1 clamps to 1", prop(3), 0, 0, 0},
		{"prop f negative clamps to 0", prop(-1), 0, 0, 100 * time.Millisecond},
		{"prop f NaN is default", prop(math.NaN()), 0, 0, 90 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Delay(tt.retry, tt.r); got != tt.want {
				t.Errorf("Delay(%d, %v) = %v (%d), want %v (%d)", tt.retry, tt.r, got, int64(got), tt.want, int64(tt.want))
			}
		})
	}
}

// TestDelayMonotone checks that the base grows with retry and the wait with r.
func TestDelayMonotone(t *testing.T) {
	for _, p := range []Policy{{}, {Jitter: ProportionalJitter}, {BaseDelay: 1, MaxDelay: math.MaxInt64}} {
		prev := time.Duration(0)
		for retry := 0; retry < 80; retry++ {
			got := p.Delay(retry, 0.7)
			if got < prev {
				t.Fatalf("%+v: Delay(%d) = %v < Delay(%d) = %v", p, retry, got, retry-1, prev)
			}
			prev = got
		}
		prev = 0
		for r := 0.0; r < 1; r += 1.0 / 64 {
			got := p.Delay(3, r)
			if got < prev {
				t.Fatalf("%+v: Delay(3, %v) = %v < %v", p, r, got, prev)
			}
			prev = got
		}
	}
}

func TestJitterString(t *testing.T) {
	for j, want := range map[Jitter]string{FullJitter: "full", ProportionalJitter: "proportional", 5: "Jitter(5)"} {
		if got := j.String(); got != want {
			t.Errorf("Jitter(%d).String() = %q, want %q", int(j), got, want)
		}
	}
}
