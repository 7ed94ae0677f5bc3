package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/dashboard"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/openai"
	"github.com/loopctl/loopctl-go/retry"
)

// An agent's breakers on the page, as the observability guide
// (docs/observability.md) mounts it; the run trips the model breaker (its
// primary fails), and the page's state.json shows it.
func Example() {
	srv := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"gpt-4o":      llmtest.Always(llmtest.Error(500)),
		"gpt-4o-mini": llmtest.Always(llmtest.Text("hello")),
	}))
	defer srv.Close()
	defer srv.CloseClientConnections()
	p, _ := openai.New(openai.Config{BaseURL: srv.BaseURL(), APIKey: "test"})
	cfg := agent.Config{
		Provider: p,
		Models:   fallback.Settings{Primary: "gpt-4o", Chain: []string{"gpt-4o-mini"}, TripThreshold: 1},
		Retry:    retry.Policy{MaxRetries: -1}, // no retries: one failed request trips gpt-4o
	}
	mux := http.NewServeMux()

	log := dashboard.NewLog(100) // feed it: Settings.OnTransition = log.ModelHook("gpt-4o")
	cfg.Models.OnTransition = log.ModelHook("gpt-4o")
	a, _ := agent.New(cfg)
	h := dashboard.New(func() dashboard.Sources {
		return dashboard.Sources{
			Models: []dashboard.Model{{Name: "gpt-4o", Manager: a.Models(), Settings: cfg.Models}},
			Tools:  []dashboard.ToolSet{{Name: "agent", Registry: a.Tools()}},
		}
	}, dashboard.Options{Log: log})
	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", h))

	a.Run(context.Background(), []agent.Message{{Role: agent.RoleUser, Content: "hi"}})
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest("GET", "/dashboard/state.json", nil))
	var st dashboard.State
	json.Unmarshal(rec.Body.Bytes(), &st)
	m, t := st.Models[0], st.Transitions[0]
	fmt.Println(rec.Code, m.Name, m.State, m.ActiveModel)
	fmt.Println(t.Breaker, t.From, "->", t.To, t.ToModel)
	// Output:
	// 200 gpt-4o fallback gpt-4o-mini
	// gpt-4o primary -> fallback gpt-4o-mini
}
