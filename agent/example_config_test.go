package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/openai"
	"github.com/loopctl/loopctl-go/retry"
)

// searchOnce scripts a model that calls search once, then answers with what
// the tool returned.
func searchOnce(r llmtest.Request) llmtest.Reply {
	if r.Last().Role != "tool" {
		return llmtest.Calls(llmtest.Call("search", `{"query":"reset the model breaker"}`))
	}
	return llmtest.Text("Manager.Reset: " + r.Last().Content)
}

// The agent of the library guide (docs/library.md): a typed tool, a model
// breaker with a fallback chain, the typed errors that end a run.
func ExampleNew() {
	srv := llmtest.NewOpenAI(searchOnce)
	defer srv.Close()
	defer srv.CloseClientConnections()
	baseURL := srv.BaseURL()
	ctx := context.Background()

	type searchArgs struct {
		Query string `json:"query" desc:"what to search for"`
		Limit int    `json:"limit,omitempty" desc:"at most this many results"`
	}

	p, err := openai.New(openai.Config{BaseURL: baseURL, APIKey: "local"}) // baseURL: e.g. "http://localhost:8000/v1"
	if err != nil {
		log.Fatal(err)
	}
	search, err := agent.NewTool("search", "search the docs", // the JSON schema comes from searchArgs
		func(ctx context.Context, a searchArgs) (string, error) { return "results for " + a.Query, nil })
	if err != nil {
		log.Fatal(err)
	}
	a, err := agent.New(agent.Config{
		Provider:    p,
		Models:      fallback.Settings{Primary: "big-model", Chain: []string{"small-model"}},
		Tools:       []agent.Tool{search},
		ToolTimeout: 10 * time.Second,
		Logger:      slog.Default(),
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Run(ctx, []agent.Message{{Role: agent.RoleUser, Content: "How do I reset the model breaker?"}})
	switch {
	case errors.Is(err, fallback.ErrExhausted):
		log.Fatal("every model is down: ", err)
	case err != nil:
		log.Fatal(err) // agent.ErrTurnFailed, agent.ErrCanceled or agent.ErrMaxTurns
	}
	fmt.Println(res.Answer, res.Usage)
	// Output: Manager.Reset: results for reset the model breaker {0 0}
}

// The whole agent in one JSON value, for a dashboard or a log line: here
// after a run whose primary failed (the model breaker is in fallback) and
// whose search tool failed (its breaker is open). A fake clock fixes the
// times.
func ExampleAgent_Snapshot() {
	srv := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"gpt-a": llmtest.Always(llmtest.Error(500)),
		"gpt-b": searchOnce,
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	p, _ := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "local"})
	type searchArgs struct {
		Query string `json:"query"`
	}
	search, _ := agent.NewTool("search", "search the docs",
		func(context.Context, searchArgs) (string, error) { return "", errors.New("index unavailable") })
	a, _ := agent.New(agent.Config{
		Provider:    p,
		Models:      fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"}, TripThreshold: 1, Now: clock},
		ToolBreaker: breaker.Settings{FailureThreshold: 1, RecoveryDuration: 30 * time.Second, Now: clock},
		Retry:       retry.Policy{MaxRetries: -1}, // no retries: one failed request trips gpt-a
		Tools:       []agent.Tool{search},
	})
	a.Run(context.Background(), []agent.Message{{Role: agent.RoleUser, Content: "search"}})

	b, _ := json.Marshal(a.Snapshot())
	// {"primary":"gpt-a","active_model":"gpt-b","models":{"state":"fallback",…},
	//  "tools":[{"name":"search","breaker":{"state":"open",…},"retry_in":"30s","status":"unhealthy",…}]}
	fmt.Println(string(b))
	// Output:
	// {"primary":"gpt-a","active_model":"gpt-b","models":{"state":"fallback","consecutive_failures":0,"probe_successes":0,"tripped_at":"2026-01-01T12:00:00Z","fallback_activated":true,"chain":[{"model":"gpt-b","attempts":0,"available":true,"failed":false}],"cooldown_ends":"2026-01-01T12:01:00Z","cooldown_cause":"recovery_timeout","trips":1},"tools":[{"name":"search","breaker":{"state":"open","consecutive_failures":1,"last_failure":"2026-01-01T12:00:00Z","trips":1,"open_until":"2026-01-01T12:00:30Z","cause":"recovery_timeout"},"retry_in":"30s","status":"unhealthy","stats":{"calls":1,"successes":0,"failures":1,"total_duration":"0s","max_duration":"0s","ewma":0.7,"success_rate":0,"score":0.48999999999999994}}]}
}
