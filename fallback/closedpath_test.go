package fallback

import (
	"sync/atomic"
	"testing"
	"time"
)

// The closed path stays at the floor with the settings of SEMANTICS §9
// (the trip count is touched only on a trip): with RecoveryBackoff,
// MaxRecoveryTimeout and SlowCallAfter alone set, Begin and a success in
// Primary (SuccessAfter included) read no clock, take no lock and allocate
// nothing.
func TestClosedPathWithBackoff(t *testing.T) {
	var reads atomic.Int64
	m, err := New(Settings{Primary: "a", Chain: []string{"b"}, RecoveryBackoff: 2, MaxRecoveryTimeout: time.Hour,
		SlowCallAfter: time.Second, Now: func() time.Time { reads.Add(1); return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	reads.Store(0)
	turn := func() {
		tk, _ := m.Begin()
		tk.Success()
		tk, _ = m.Begin()
		tk.SuccessAfter(time.Hour) // slow, but not a probe and no slow-call rate: a plain success
	}
	turn()
	if got := reads.Load(); got != 0 {
		t.Errorf("Begin + Success + SuccessAfter read the clock %d times, want 0", got)
	}
	if raceEnabled {
		return // allocation counts are not meaningful under -race
	}
	if allocs := testing.AllocsPerRun(1000, turn); allocs != 0 {
		t.Errorf("%v allocations per closed-path turn with backoff set", allocs)
	}
}

// BenchmarkBeginSuccessPrimaryBackoff is BenchmarkBeginSuccessPrimary with
// RecoveryBackoff and MaxRecoveryTimeout set: the same path.
func BenchmarkBeginSuccessPrimaryBackoff(b *testing.B) {
	m, err := New(Settings{Primary: "a", Chain: []string{"b"}, RecoveryBackoff: 2, MaxRecoveryTimeout: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		tk, err := m.Begin()
		if err != nil || tk.Model() != "a" {
			b.Fatal(tk.Model(), err)
		}
		tk.Success()
	}
}
