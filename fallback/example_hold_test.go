package fallback_test

import (
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// An operator holds the primary out of rotation for ten minutes (an
// incident), takes a flaky backup out for an hour, then releases the hold
// early: the next turn probes the primary. A fake clock drives the time.
func ExampleManager_Hold() {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := start
	m, err := fallback.New(fallback.Settings{
		Primary:                 "gpt-a",
		Chain:                   []string{"gpt-b", "gpt-c"},
		RecoverySuccessesNeeded: 1,
		Now:                     func() time.Time { return now },
		OnTransition: func(t fallback.Transition) {
			fmt.Printf("  %s -> %s (%q -> %q) at +%v\n", t.From, t.To, t.FromModel, t.ToModel, t.At.Sub(start))
		},
	})
	if err != nil {
		panic(err)
	}
	m.Hold(now.Add(10*time.Minute), "INC-42")
	s := m.Snapshot()
	fmt.Printf("held until +%v (%s, cause %s)\n", s.HoldUntil.Sub(start), s.HoldReason, s.CooldownCause)
	_ = m.Disable("gpt-b", now.Add(time.Hour), "flaky")
	e := m.Snapshot().Chain[0]
	fmt.Printf("%s disabled until +%v (%s)\n", e.Model, e.DisabledUntil.Sub(start), e.DisabledReason)
	now = now.Add(2 * time.Minute)
	t, _ := m.Begin()
	fmt.Println("turn on", t.Model(), "probe", t.IsProbe())
	t.Success()
	m.Release()
	t, _ = m.Begin()
	fmt.Println("turn on", t.Model(), "probe", t.IsProbe())
	t.Success()
	fmt.Println("state:", m.State())
	// Output:
	//   primary -> fallback ("gpt-a" -> "gpt-b") at +0s
	// held until +10m0s (INC-42, cause manual)
	//   fallback -> fallback ("gpt-b" -> "gpt-c") at +0s
	// gpt-b disabled until +1h0m0s (flaky)
	// turn on gpt-c probe false
	//   fallback -> recovering ("gpt-c" -> "gpt-a") at +2m0s
	// turn on gpt-a probe true
	//   recovering -> primary ("gpt-a" -> "gpt-a") at +2m0s
	// state: primary
}
