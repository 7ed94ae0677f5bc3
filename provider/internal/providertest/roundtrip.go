package providertest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/llmtest"
)

// conversation generates a random well-formed conversation: every tool call
// is answered, in order, right after the assistant message that made it.
func conversation(rng *rand.Rand) []agent.Message {
	var msgs []agent.Message
	if rng.IntN(2) == 0 {
		msgs = append(msgs, agent.Message{Role: agent.RoleSystem, Content: "sys"})
	}
	msgs = append(msgs, agent.Message{Role: agent.RoleUser, Content: "task"})
	id := 0
	for range rng.IntN(5) {
		a := agent.Message{Role: agent.RoleAssistant}
		if rng.IntN(2) == 0 {
			a.Content = fmt.Sprintf("thinking %d", rng.IntN(100))
		}
		for range rng.IntN(4) {
			id++
			c := agent.ToolCall{ID: fmt.Sprintf("id%d", id), Name: fmt.Sprintf("tool%d", rng.IntN(3))}
			if rng.IntN(3) > 0 {
				c.Arguments = json.RawMessage(fmt.Sprintf(`{"n":%d,"s":["x"]}`, rng.IntN(1000)))
			}
			a.ToolCalls = append(a.ToolCalls, c)
		}
		if a.Content == "" && len(a.ToolCalls) == 0 {
			a.Content = "ok"
		}
		msgs = append(msgs, a)
		for _, c := range a.ToolCalls {
			r := agent.Message{Role: agent.RoleTool, ToolCallID: c.ID, ToolName: c.Name, IsError: rng.IntN(3) == 0}
			if rng.IntN(4) > 0 {
				r.Content = fmt.Sprintf("result %d", rng.IntN(100))
			}
			msgs = append(msgs, r)
		}
		if len(a.ToolCalls) == 0 || rng.IntN(3) == 0 {
			msgs = append(msgs, agent.Message{Role: agent.RoleUser, Content: "more"})
		}
		if rng.IntN(6) == 0 {
			msgs = append(msgs, agent.Message{Role: agent.RoleSystem, Content: "note"})
		}
	}
	return msgs
}

// TestRoundTrip is a property test: it sends 200 random well-formed
// conversations (fixed, logged seed) through the adapter to the fake
// server, which must accept them (its wire rules are the real service's)
// and decode each to Harness.Expected of what was sent.
func TestRoundTrip(t *testing.T, h Harness) {
	h.check(t)
	seed := uint64(20261129)
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	srv := h.NewServer(llmtest.Always(llmtest.Text("ok")))
	defer srv.Close()
	p := h.NewProvider(t, srv.BaseURL(), nil)
	for i := range 200 {
		msgs := conversation(rng)
		if _, err := p.Complete(context.Background(), agent.Request{Model: "m", Messages: msgs}); err != nil {
			t.Fatalf("conversation %d: %v\n%+v", i, err, msgs)
		}
		got := srv.Requests()[i].Messages
		if want := h.Expected(msgs); !reflect.DeepEqual(got, want) {
			t.Fatalf("conversation %d decoded\n got %+v\nwant %+v", i, got, want)
		}
	}
}
