package fallback

import (
	"testing"
	"time"
)

func benchManager(b *testing.B, tripped bool) *Manager {
	b.Helper()
	return benchManagerWith(b, tripped, 0)
}

// benchManagerWith is benchManager with a failure-rate window at rate (0: none).
func benchManagerWith(b *testing.B, tripped bool, rate float64) *Manager {
	b.Helper()
	m, err := New(Settings{
		Primary: "a", Chain: []string{"b", "c"},
		RecoveryTimeout: 1000 * time.Hour, // stay in Fallback (time.Now is read each Begin)
		OnTransition:    func(Transition) {},
		FailureRate:     rate,
	})
	if err != nil {
		b.Fatal(err)
	}
	if tripped {
		for range 3 {
			t, _ := m.Begin()
			t.Failure(Transient)
		}
		if m.State() != Fallback {
			b.Fatal("not tripped")
		}
	}
	return m
}

func benchBeginSuccess(b *testing.B, tripped bool, want string) {
	benchBeginSuccessWith(b, tripped, want, 0)
}

func benchBeginSuccessWith(b *testing.B, tripped bool, want string, rate float64) {
	b.Run("serial", func(b *testing.B) {
		m := benchManagerWith(b, tripped, rate)
		b.ReportAllocs()
		for b.Loop() {
			t, err := m.Begin()
			if err != nil || t.Model() != want {
				b.Fatal(t.Model(), err)
			}
			t.Success()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		m := benchManagerWith(b, tripped, rate)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				t, err := m.Begin()
				if err != nil || t.Model() != want {
					b.Error(t.Model(), err)
					return
				}
				t.Success()
			}
		})
	})
}

// BenchmarkBeginSuccessPrimary measures one turn on the primary: Begin, Success.
func BenchmarkBeginSuccessPrimary(b *testing.B) { benchBeginSuccess(b, false, "a") }

// BenchmarkBeginSuccessPrimaryWindow measures it with a failure-rate window
// (§8.4: one clock read per verdict, nothing else).
func BenchmarkBeginSuccessPrimaryWindow(b *testing.B) { benchBeginSuccessWith(b, false, "a", 0.5) }

// BenchmarkBeginSuccessFallback measures one turn on a chain entry while tripped.
func BenchmarkBeginSuccessFallback(b *testing.B) { benchBeginSuccess(b, true, "b") }

// BenchmarkActiveModel measures the pure read.
func BenchmarkActiveModel(b *testing.B) {
	m := benchManager(b, true)
	b.ReportAllocs()
	for b.Loop() {
		if m.ActiveModel() != "b" {
			b.Fatal("ActiveModel")
		}
	}
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	for i, tripped := range []bool{false, true, false} {
		rate := 0.0
		if i == 2 { // with a rate window (§8.4: a clock read per verdict, nothing else)
			rate = 0.5
		}
		m, err := New(Settings{Primary: "a", Chain: []string{"b"}, RecoveryTimeout: time.Hour, OnTransition: func(Transition) {}, FailureRate: rate})
		if err != nil {
			t.Fatal(err)
		}
		if tripped {
			for range 3 {
				tk, _ := m.Begin()
				tk.Failure(Transient)
			}
		}
		allocs := testing.AllocsPerRun(1000, func() {
			tk, _ := m.Begin()
			tk.Success()
			tk, _ = m.Begin()
			tk.Cancel()
		})
		if allocs != 0 {
			t.Fatalf("tripped=%v: %v allocations per Begin+settle", tripped, allocs)
		}
	}
}
