package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// TestObjectSchema: a tool's schema reaches every wire as an object schema
// with "type":"object" (Anthropic answers 400 "input_schema.type: Field
// required" without one; OpenAI requires parameters of type object), the
// rest of the client's schema byte for byte.
func TestObjectSchema(t *testing.T) {
	rows := []struct {
		name, in, want string
	}{
		{name: "empty object", in: `{}`, want: `{"type":"object"}`},
		{name: "empty object with space", in: `{ }`, want: `{"type":"object" }`},
		{name: "object type kept as it is", in: `{"type" : "object","properties":{}}`, want: `{"type" : "object","properties":{}}`},
		{name: "no type", in: `{"properties": {"z": {"type": "string"}, "a": {}}}`,
			want: `{"type":"object","properties": {"z": {"type": "string"}, "a": {}}}`},
		{name: "a property named type is no type", in: `{"properties":{"type":{"type":"string"}}}`,
			want: `{"type":"object","properties":{"type":{"type":"string"}}}`},
		{name: "another type", in: `{"description":"d","type":"string"}`, want: `{"description":"d","type":"object"}`},
		{name: "a type list", in: `{"type":["object","null"],"properties":{}}`, want: `{"type":"object","properties":{}}`},
		{name: "an escaped type key", in: `{"typ\u0065":"array","items":{}}`, want: `{"typ\u0065":"object","items":{}}`},
		{name: "escaped object kept", in: `{"type":"obj\u0065ct"}`, want: `{"type":"obj\u0065ct"}`},
		{name: "none", in: ``, want: string(emptySchema)},
		{name: "null", in: `null`, want: string(emptySchema)},
		{name: "an array", in: `[{"type":"object"}]`, want: string(emptySchema)},
		{name: "true", in: `true`, want: string(emptySchema)},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			got := objectSchema(json.RawMessage(row.in))
			if string(got) != row.want || !json.Valid(got) {
				t.Fatalf("objectSchema(%s) = %s, want %s", row.in, got, row.want)
			}
		})
	}
}

// TestTranslateToolSchemas: each wire's tool schema reaches the others as
// an object schema, keeping the client's bytes.
func TestTranslateToolSchemas(t *testing.T) {
	const noType = `{"properties": {"z": {"type": "string"}, "a": {}}}`
	const typed = `{"type":"object","properties": {"z": {"type": "string"}, "a": {}}}`
	hi := `"messages":[{"role":"user","content":"hi"}]`
	contains := func(s string) func(t *testing.T, tr *Translation) {
		return func(t *testing.T, tr *Translation) {
			if !bytes.Contains(tr.Body, []byte(s)) {
				t.Errorf("body lacks %s:\n%s", s, tr.Body)
			}
		}
	}
	runReqCases(t, []reqCase{
		{name: "chat parameters {} to messages", from: Chat, to: Messages,
			body: `{` + hi + `,"tools":[{"type":"function","function":{"name":"now","parameters":{}}}]}`,
			want: map[string]string{"tools.0.input_schema": `{"type":"object"}`}},
		{name: "responses parameters {} to messages", from: Responses, to: Messages,
			body: `{"input":"hi","tools":[{"type":"function","name":"now","parameters":{}}]}`,
			want: map[string]string{"tools.0.input_schema": `{"type":"object"}`}},
		{name: "chat parameters without type to messages", from: Chat, to: Messages,
			body:  `{` + hi + `,"tools":[{"type":"function","function":{"name":"f","parameters":` + noType + `}}]}`,
			check: contains(`"input_schema":` + typed)},
		{name: "responses parameters without type to messages", from: Responses, to: Messages,
			body:  `{"input":"hi","tools":[{"type":"function","name":"f","parameters":` + noType + `}]}`,
			check: contains(`"input_schema":` + typed)},
		{name: "messages input_schema {} to chat", from: Messages, to: Chat,
			body: `{"max_tokens":10,` + hi + `,"tools":[{"name":"f","input_schema":{}}]}`,
			want: map[string]string{"tools.0.function.parameters": `{"type":"object"}`}},
		{name: "messages input_schema without type to responses", from: Messages, to: Responses,
			body:  `{"max_tokens":10,` + hi + `,"tools":[{"name":"f","input_schema":` + noType + `}]}`,
			check: contains(`"parameters":` + typed)},
		{name: "messages string schema to chat object", from: Messages, to: Chat,
			body: `{"max_tokens":10,` + hi + `,"tools":[{"name":"f","input_schema":{"type":"string"}}]}`,
			want: map[string]string{"tools.0.function.parameters": `{"type":"object"}`}},
		{name: "object schema unchanged", from: Chat, to: Messages,
			body:  `{` + hi + `,"tools":[{"type":"function","function":{"name":"f","parameters":` + typed + `}}]}`,
			check: contains(`"input_schema":` + typed)},
	})
}

// TestTranslateChatCustomTools: a chat client's custom tool (type custom)
// is sent as a function tool with one string field input, its calls in
// the history with their input in it, and the answer's calls of it come
// back as custom tool calls (GATEWAY §8.2, tools).
func TestTranslateChatCustomTools(t *testing.T) {
	runReqCases(t, []reqCase{
		{name: "chat custom tool to messages and its call back as custom", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":"patch"},{"role":"assistant","tool_calls":[{"id":"c1","type":"custom","custom":{"name":"apply_patch","input":"*** Begin"}}]},{"role":"tool","tool_call_id":"c1","content":"done"}],"tools":[{"type":"custom","custom":{"name":"apply_patch","description":"p","format":{"type":"text"}}}]}`,
			want: map[string]string{"messages.1.content.0": `{"type":"tool_use","id":"c1","name":"apply_patch","input":{"input":"*** Begin"}}`,
				"tools.0.input_schema": string(customSchema)},
			check: func(t *testing.T, tr *Translation) {
				out, err := tr.Response([]byte(`{"id":"m","type":"message","content":[{"type":"tool_use","id":"toolu_1","name":"apply_patch","input":{"input":"*** End"}}],"stop_reason":"tool_use"}`))
				if err != nil {
					t.Fatal(err)
				}
				want := []callView{{ID: "toolu_1", Name: "apply_patch", Input: "*** End", Custom: true}}
				if got := oracleView(t, Chat, out, "up"); !reflect.DeepEqual(got.Calls, want) {
					t.Errorf("calls %+v, want %+v\n%s", got.Calls, want, out)
				}
			}},
		{name: "chat custom tool to responses", from: Chat, to: Responses,
			body: `{"messages":[{"role":"user","content":"patch"},{"role":"assistant","tool_calls":[{"id":"c1","type":"custom","custom":{"name":"apply_patch","input":"x"}}]},{"role":"tool","tool_call_id":"c1","content":"done"}],"tools":[{"type":"custom","custom":{"name":"apply_patch"}}]}`,
			want: map[string]string{"input.1": `{"type":"function_call","call_id":"c1","name":"apply_patch","arguments":"{\"input\":\"x\"}"}`,
				"tools.0.parameters": string(customSchema)},
			check: func(t *testing.T, tr *Translation) {
				if got := tr.clientTool("apply_patch"); !got.Custom {
					t.Errorf("clientTool = %+v, want Custom", got)
				}
			}},
	})
}
