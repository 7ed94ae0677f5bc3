package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/retry"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// snapshotProvider fails every request to the model "gpt-a" with a 500 and
// answers from "gpt-b": first a call of the tool "search", then text.
type snapshotProvider struct{ calls int }

func (p *snapshotProvider) Complete(_ context.Context, req agent.Request) (agent.Response, error) {
	if req.Model == "gpt-a" {
		return agent.Response{}, &retry.StatusError{Code: 500, Err: errors.New("upstream down")}
	}
	p.calls++
	if p.calls == 1 {
		return agent.Response{Message: agent.Message{Role: agent.RoleAssistant,
			ToolCalls: []agent.ToolCall{{ID: "c1", Name: "search", Arguments: json.RawMessage(`{}`)}}}}, nil
	}
	return agent.Response{Message: agent.Message{Role: agent.RoleAssistant, Content: "done"}}, nil
}

// TestAgentSnapshotGolden runs an agent through a failover and a tool
// failure on a fixed clock, and compares the JSON of Agent.Snapshot with
// testdata/snapshot.golden.json (go test -run TestAgentSnapshotGolden -update
// rewrites it).
func TestAgentSnapshotGolden(t *testing.T) {
	now := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	fail := func(context.Context, json.RawMessage) (string, error) { return "", errors.New("index offline") }
	ok := func(context.Context, json.RawMessage) (string, error) { return "found", nil }
	a, err := agent.New(agent.Config{
		Provider:    &snapshotProvider{},
		Models:      fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b", "gpt-c"}, Now: clock},
		ToolBreaker: breaker.Settings{FailureThreshold: 1, Now: clock},
		Retry:       retry.Policy{MaxRetries: -1},
		Tools: []agent.Tool{
			{Name: "search", Func: fail},
			{Name: "web", Func: ok},
			{Name: "calc", Func: ok},
		},
		Backups: map[string][]string{"search": {"web"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Run(t.Context(), []agent.Message{{Role: agent.RoleUser, Content: "hi"}}); err != nil {
		t.Fatal(err)
	}
	snap := a.Snapshot()
	got, err := json.MarshalIndent(snap, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "snapshot.golden.json")
	if *updateGolden {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Agent.Snapshot() JSON differs from %s:\n%s", golden, got)
	}

	var back agent.Snapshot
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, snap) {
		t.Fatalf("round trip = %+v\nwant %+v", back, snap)
	}

	// The snapshot is a pure read: it created no breaker for calc or web and changed nothing.
	if n := len(a.Tools().Summary()); n != 1 {
		t.Fatalf("registry knows %d tools after Snapshot, want 1 (search)", n)
	}
	if again := a.Snapshot(); !reflect.DeepEqual(again, snap) {
		t.Fatalf("second Snapshot differs:\n%+v\n%+v", again, snap)
	}
}

func TestToolSnapshotJSON(t *testing.T) {
	ts := agent.ToolSnapshot{Name: "x", Breaker: breaker.Snapshot{State: breaker.Open, ConsecutiveFailures: 2},
		RetryIn: 1500 * time.Millisecond, Status: health.Unhealthy, Stats: health.Stats{Calls: 2, Failures: 2, EWMA: 0.5}}
	b, err := json.Marshal(ts)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"x","breaker":{"state":"open","consecutive_failures":2},"retry_in":"1.5s","status":"unhealthy",` +
		`"stats":{"calls":2,"successes":0,"failures":2,"total_duration":"0s","max_duration":"0s","ewma":0.5,"success_rate":0,"score":0.35}}`
	if string(b) != want {
		t.Fatalf("Marshal = %s\nwant      %s", b, want)
	}
	var got agent.ToolSnapshot
	if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, ts) {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	if err := json.Unmarshal([]byte(`{"name":"x","retry_in":"later"}`), &got); err == nil {
		t.Error("bad retry_in: nil error")
	}
	b, _ = json.Marshal(agent.Snapshot{})
	if want := `{"primary":"","active_model":"","models":{"state":"primary","consecutive_failures":0,"probe_successes":0,"fallback_activated":false,"chain":[]},"tools":[]}`; string(b) != want {
		t.Fatalf("empty Snapshot = %s, want %s", b, want)
	}
}
