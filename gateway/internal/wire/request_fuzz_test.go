package wire

import (
	"encoding/json"
	"testing"
)

// FuzzTranslate translates any body from every wire to the two others:
// no panic, and the body is valid JSON whenever there is no error; with
// the literals its decoder read it decodes to what it decodes to without
// them (sameWithLiterals).
func FuzzTranslate(f *testing.F) {
	seeds := []struct {
		from API
		body string
	}{
		{Messages, `{"model":"c","max_tokens":10,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"a.b","name":"f","input":{"x":1}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a.b","content":[{"type":"text","text":"r"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QQ=="}}],"is_error":true}]}],"tools":[{"name":"f","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}],"thinking":{"type":"enabled","budget_tokens":2000}}`},
		{Chat, `{"model":"g","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"q"},{"type":"image_url","image_url":{"url":"data:image/png;base64,QQ=="}}]},{"role":"assistant","content":"a","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]},{"role":"developer","content":"late"},{"role":"tool","tool_call_id":"c","content":"Error: no"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":"required","stop":["x"],"reasoning_effort":"high","seed":1}`},
		{Responses, `{"model":"g","instructions":"i","input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs","encrypted_content":"e","summary":[]},{"type":"function_call","call_id":"c","namespace":"ns","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"r"},{"type":"custom_tool_call","call_id":"d","name":"p","input":"x"},{"type":"custom_tool_call_output","call_id":"d","output":"ok"},{"type":"web_search_call","action":{"query":"q"}}],"tools":[{"type":"namespace","name":"ns","tools":[{"type":"function","name":"f"}]},{"type":"custom","name":"p"},{"type":"web_search"}],"text":{"format":{"type":"json_schema","name":"o","schema":{}}}}`},
		{Responses, `{"input":"hi"}`},
		{Chat, `{"messages":[]}`},
		{Chat, `{"messages":[{"role":"user","content":"q"}],"tools":[{"type":"function","function":{"name":"f","parameters":{}}},{"type":"function","function":{"name":"g","parameters":{"typ\u0065":["string"],"properties":{"type":{}}}}}]}`},
		{Messages, `{"max_tokens":1,"messages":[{"role":"user","content":"q"}],"tools":[{"name":"f","input_schema":{ }},{"name":"g","input_schema":{"type":"array"}}]}`},
	}
	for _, s := range seeds {
		f.Add(uint8(s.from), []byte(s.body))
	}
	for _, b := range literalBodies {
		f.Add(uint8(b.from), []byte(b.body))
	}
	f.Fuzz(func(t *testing.T, fromByte uint8, body []byte) {
		from := API(fromByte % 3)
		for _, to := range []API{Chat, Responses, Messages} {
			if to == from {
				continue
			}
			tr, err := Translate(from, body, Target{API: to, Model: "m", Family: to == Messages})
			if err != nil {
				continue
			}
			// The gateway sends a body first translated without json.Valid:
			// the translator accepts only valid JSON.
			if !json.Valid(body) {
				t.Fatalf("%s->%s: accepted invalid JSON %q", from, to, body)
			}
			if !json.Valid(tr.Body) {
				t.Fatalf("%s->%s: invalid JSON body %q", from, to, tr.Body)
			}
			checkObjectSchemas(t, to, tr.Body)
			sameWithLiterals(t, from, body, to)
		}
	})
}

// checkObjectSchemas checks every tool of a translated body has an object
// schema with "type":"object".
func checkObjectSchemas(t *testing.T, to API, body []byte) {
	t.Helper()
	var req struct {
		Tools []struct {
			Parameters  map[string]json.RawMessage `json:"parameters"`
			InputSchema map[string]json.RawMessage `json:"input_schema"`
			Function    struct {
				Parameters map[string]json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("->%s: tools: %v in %s", to, err, body)
	}
	for i, tool := range req.Tools {
		schema := map[API]map[string]json.RawMessage{Chat: tool.Function.Parameters,
			Responses: tool.Parameters, Messages: tool.InputSchema}[to]
		if string(schema["type"]) != `"object"` && !jsonStringIs(schema["type"], "object") {
			t.Fatalf("->%s: tool %d schema type %s in %s", to, i, schema["type"], body)
		}
	}
}
