package fallback

import (
	"fmt"
	"testing"
)

// caught is a fataler that records the first failure and stops the history.
type caught struct{ msg string }

type stopHistory struct{}

func (c *caught) Helper() {}
func (c *caught) Fatal(args ...any) {
	c.msg = fmt.Sprint(args...)
	panic(stopHistory{})
}
func (c *caught) Fatalf(format string, args ...any) {
	c.msg = fmt.Sprintf(format, args...)
	panic(stopHistory{})
}

// historyFails runs the history of seed and returns its first failure ("" if none).
func historyFails(seed uint64, steps int) (msg string) {
	c := &caught{}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(stopHistory); !ok {
				panic(r)
			}
			msg = c.msg
		}
	}()
	runHistory(c, seed, steps, &coverage{})
	return ""
}

// TestPropertyCatchesRulesSwitchedOff shows that the random histories check
// each rule of SEMANTICS §8 for the model breaker: with the failure-rate
// trip, slow calls, the slow-call trip, the budget's spending or its feeding
// switched off in the Manager (the reference keeps them), some seed fails.
func TestPropertyCatchesRulesSwitchedOff(t *testing.T) {
	defer func() { mutate = nil }()
	for _, c := range []struct {
		name string
		off  func(*Manager)
	}{
		{"failure rate (§8.1)", func(m *Manager) { m.cfg.rule.FailureRate = 0 }},
		{"slow calls (§8.2)", func(m *Manager) { m.cfg.slowAfter = 0; m.tuning.store(&m.cfg) }},
		{"slow-call rate (§8.2)", func(m *Manager) { m.cfg.rule.SlowRate = 0 }}, // counted, never trips
		{"retry budget spending (§8.3)", func(m *Manager) {
			for i := range m.budgets {
				m.budgets[i].Init(-1, 0) // off: every retry allowed
			}
		}},
		{"retry budget feeding (§8.3)", func(m *Manager) {
			for i := range m.budgets {
				m.budgets[i].Init(1e-300, m.budgets[i].Tokens()) // feeds (almost) nothing
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			mutate = c.off
			for seed := range uint64(300) {
				if msg := historyFails(seed, 400); msg != "" {
					t.Logf("seed %d catches it: %.200s", seed, lastLine(msg))
					return
				}
			}
			t.Fatalf("no history fails with the %s rule switched off", c.name)
		})
	}
}

func lastLine(s string) string {
	for i := len(s) - 1; i > 0; i-- {
		if s[i-1] == '\n' {
			return s[i:]
		}
	}
	return s
}
