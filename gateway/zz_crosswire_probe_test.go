package gateway

import (
	"testing"
)

func TestZZCCProbe(t *testing.T) {
	f := newCrossWireFixture(t)
	f.runClaudeCode(t)
	for _, r := range f.up.Requests() {
		if r.Model != "weather-cc-gone" {
			continue
		}
		for _, m := range r.Messages {
			t.Logf("UP %s %s: %.200q", r.Model, m.Role, m.Content)
		}
	}
}
