package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/loopctl/loopctl-go/agent"
)

func TestEventKindOutcomeText(t *testing.T) {
	kinds := []agent.EventKind{agent.EventTurnStarted, agent.EventTurnFinished, agent.EventRetry,
		agent.EventToolCall, agent.EventModelTransition, agent.EventToolTransition}
	for _, k := range kinds {
		b, err := json.Marshal(k)
		if err != nil || string(b) != `"`+k.String()+`"` {
			t.Fatalf("Marshal(%v) = %s, %v", k, b, err)
		}
		var got agent.EventKind
		if err := json.Unmarshal(b, &got); err != nil || got != k {
			t.Fatalf("Unmarshal(%s) = %v, %v", b, got, err)
		}
	}
	outcomes := []agent.Outcome{agent.OutcomeOK, agent.OutcomeError, agent.OutcomeRefused, agent.OutcomePanic,
		agent.OutcomeTimeout, agent.OutcomeUnknown, agent.OutcomeCancelled, agent.OutcomeBadArguments}
	for _, o := range outcomes {
		b, err := json.Marshal(o)
		if err != nil || string(b) != `"`+o.String()+`"` {
			t.Fatalf("Marshal(%v) = %s, %v", o, b, err)
		}
		var got agent.Outcome
		if err := json.Unmarshal(b, &got); err != nil || got != o {
			t.Fatalf("Unmarshal(%s) = %v, %v", b, got, err)
		}
	}
	var k agent.EventKind
	var o agent.Outcome
	for _, bad := range []string{"", "invalid", "OK", "turn"} {
		if k.UnmarshalText([]byte(bad)) == nil || o.UnmarshalText([]byte(bad)) == nil {
			t.Errorf("UnmarshalText(%q) = nil error", bad)
		}
	}
	if _, err := agent.EventKind(0).MarshalText(); err == nil {
		t.Error("EventKind(0).MarshalText() = nil error")
	}
	if _, err := agent.Outcome(99).MarshalText(); err == nil {
		t.Error("Outcome(99).MarshalText() = nil error")
	}
}
