package wire

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// randomMessagesRequest is a Messages request with a random history of
// text, tool calls and their results (valid ids, non-blank text).
func randomMessagesRequest(r *rand.Rand) []byte {
	type block map[string]any
	msgs := []map[string]any{{"role": "user", "content": "start " + word(r)}}
	for turn := range 1 + r.IntN(6) {
		var calls, results []block
		if r.IntN(2) == 0 {
			calls = append(calls, block{"type": "text", "text": "thinking out loud " + word(r)})
		}
		for c := range r.IntN(4) {
			id := fmt.Sprintf("toolu_%d_%d_%s", turn, c, word(r))
			calls = append(calls, block{"type": "tool_use", "id": id, "name": "tool" + word(r),
				"input": map[string]any{"arg": word(r), "n": r.IntN(100)}})
			res := block{"type": "tool_result", "tool_use_id": id, "content": "result " + word(r)}
			if r.IntN(4) == 0 {
				res["is_error"] = true
			}
			results = append(results, res)
		}
		if len(calls) == 0 {
			calls = append(calls, block{"type": "text", "text": "plain answer"})
		}
		msgs = append(msgs, map[string]any{"role": "assistant", "content": calls})
		if r.IntN(2) == 0 || len(results) == 0 {
			results = append(results, block{"type": "text", "text": "user says " + word(r)})
		}
		msgs = append(msgs, map[string]any{"role": "user", "content": results})
	}
	body, _ := json.Marshal(map[string]any{"model": "c", "max_tokens": 100, "system": "be brief", "messages": msgs})
	return body
}

func word(r *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 1+r.IntN(8))
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// neutralView is a request's turns as comparable lines: text, calls (id,
// name, compact input) and results (id, error flag, text).
func neutralView(t *testing.T, body []byte) []string {
	t.Helper()
	req, err := decodeMessages(body)
	if err != nil {
		t.Fatal(err)
	}
	var view []string
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			switch p.Kind {
			case Text:
				view = append(view, m.Role+" text "+p.Text)
			case ToolCall:
				var input any
				_ = json.Unmarshal(p.Input, &input)
				view = append(view, fmt.Sprintf("%s call %s %s %s", m.Role, p.CallID, p.Name, reqJSON(input)))
			case ToolResult:
				view = append(view, fmt.Sprintf("%s result %s %v %s", m.Role, p.CallID, p.IsError, joinText(p.Content)))
			}
		}
		view = append(view, "--")
	}
	return view
}

// TestMessagesChatRoundTrip: Messages → chat → Messages keeps text, tool
// calls, tool results and their pairing.
func TestMessagesChatRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		body := randomMessagesRequest(r)
		toChat, err := Translate(Messages, body, Target{API: Chat, Model: "g"})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		back, err := Translate(Chat, toChat.Body, Target{API: Messages, Model: "c"})
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		want, got := neutralView(t, body), neutralView(t, back.Body)
		if !slices.Equal(want, got) {
			t.Fatalf("case %d changed:\nwant %s\ngot  %s\nvia %s", i, strings.Join(want, "\n"), strings.Join(got, "\n"), toChat.Body)
		}
	}
}

// claudeCodeRequest is a Messages request about the size Claude Code
// sends: a long system prompt, 40 tools, 30 turns (~100 KB).
func claudeCodeRequest() []byte {
	r := rand.New(rand.NewPCG(3, 4))
	var tools []map[string]any
	for i := range 40 {
		props := map[string]any{}
		for j := range 8 {
			props[fmt.Sprintf("param_%d", j)] = map[string]any{"type": "string", "description": strings.Repeat("describes the parameter ", 4)}
		}
		tools = append(tools, map[string]any{"name": fmt.Sprintf("Tool%d", i), "description": strings.Repeat("This tool does things. ", 20),
			"input_schema": map[string]any{"type": "object", "properties": props, "required": []string{"param_0"}}})
	}
	var msgs []map[string]any
	for i := range 15 {
		id := fmt.Sprintf("toolu_%02d", i)
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": strings.Repeat("I will look. ", 20)},
				{"type": "tool_use", "id": id, "name": "Tool1", "input": map[string]any{"param_0": word(r), "param_1": strings.Repeat("x", 200)}}}},
			map[string]any{"role": "user", "content": []map[string]any{{"type": "tool_result", "tool_use_id": id, "content": strings.Repeat("file line\n", 150)}}})
	}
	msgs = append([]map[string]any{{"role": "user", "content": "fix the bug"}}, msgs...)
	body, _ := json.Marshal(map[string]any{"model": "claude", "max_tokens": 32000, "stream": true,
		"system": []map[string]any{{"type": "text", "text": strings.Repeat("You are a coding agent. Follow the rules. ", 700), "cache_control": map[string]any{"type": "ephemeral"}}},
		"tools":  tools, "messages": msgs, "thinking": map[string]any{"type": "enabled", "budget_tokens": 8000}})
	return body
}
