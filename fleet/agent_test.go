package fleet

import (
	"context"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/redistest"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/openai"
	"github.com/loopctl/loopctl-go/retry"
)

// TestAgentsShareModelBreaker: two agents in two "processes" (two Stores),
// built exactly as in-process agents except for Config.Models.Backend. The
// first agent's failed turns trip the shared model breaker; the second
// agent's very first turn already goes to the backup.
func TestAgentsShareModelBreaker(t *testing.T) {
	srv := redistest.Start(t)
	llm := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"primary": llmtest.Always(llmtest.Error(500)),
		"backup":  llmtest.Always(llmtest.Text("hello from the backup")),
	}))
	defer llm.Close()
	provider, err := openai.New(openai.Config{BaseURL: llm.BaseURL(), APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var agents []*agent.Agent
	for range 2 {
		s := startStore(t, srv, Options{})
		a, err := agent.New(agent.Config{
			Provider: provider,
			Models: fallback.Settings{Primary: "primary", Chain: []string{"backup"}, TripThreshold: 2,
				RecoveryTimeout: time.Hour, Backend: s.ModelBackend("chat")},
			Retry: retry.Policy{MaxRetries: -1},
		})
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, a)
	}
	msgs := []agent.Message{{Role: agent.RoleUser, Content: "hi"}}
	res, err := agents[0].Run(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Attempts); n != 3 || res.Attempts[2].Model != "backup" {
		t.Fatalf("first agent's attempts: %+v, want primary, primary, backup", res.Attempts)
	}
	eventually(t, time.Second, "the second agent sees the trip", func() bool {
		return agents[1].Models().State() == fallback.Fallback
	})
	res, err = agents[1].Run(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 1 || res.Attempts[0].Model != "backup" {
		t.Fatalf("second agent's attempts: %+v, want the backup at once", res.Attempts)
	}
}
