package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// reqCase is one request translation and what its output must hold.
type reqCase struct {
	name   string
	from   API
	to     API
	target Target // API and Model ("up" when empty) are filled in
	body   string
	// want maps a dotted path of the output body (array indexes as
	// numbers) to its JSON value; "-" means the path is absent.
	want    map[string]string
	dropped []string // named in Translation.Dropped
	kept    []string // not named in Translation.Dropped
	skip    string   // the *UnsupportedError's Field
	check   func(t *testing.T, tr *Translation)
}

func runReqCases(t *testing.T, cases []reqCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			target := c.target
			target.API = c.to
			if target.Model == "" {
				target.Model = "up"
			}
			tr, err := Translate(c.from, []byte(c.body), target)
			if c.skip != "" {
				var unsupported *UnsupportedError
				if !errors.As(err, &unsupported) || unsupported.Field != c.skip {
					t.Fatalf("err = %v, want UnsupportedError for %s", err, c.skip)
				}
				return
			}
			if err != nil {
				t.Fatalf("Translate: %v", err)
			}
			checkReqOutput(t, tr, c)
		})
	}
}

func checkReqOutput(t *testing.T, tr *Translation, c reqCase) {
	t.Helper()
	var got any
	if err := json.Unmarshal(tr.Body, &got); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, tr.Body)
	}
	for path, want := range c.want {
		value, ok := reqPath(got, path)
		if want == "-" {
			if ok {
				t.Errorf("%s = %s, want absent\nbody: %s", path, reqJSON(value), tr.Body)
			}
			continue
		}
		var wantValue any
		if err := json.Unmarshal([]byte(want), &wantValue); err != nil {
			t.Fatalf("bad want for %s: %v", path, err)
		}
		if !ok || !reflect.DeepEqual(value, wantValue) {
			t.Errorf("%s = %s, want %s\nbody: %s", path, reqJSON(value), want, tr.Body)
		}
	}
	for _, d := range c.dropped {
		if !slices.Contains(tr.Dropped, d) {
			t.Errorf("Dropped = %q, want it to name %q", tr.Dropped, d)
		}
	}
	for _, k := range c.kept {
		if slices.Contains(tr.Dropped, k) {
			t.Errorf("Dropped = %q names %q", tr.Dropped, k)
		}
	}
	if c.check != nil {
		c.check(t, tr)
	}
}

// reqPath returns the value at a dotted path.
func reqPath(v any, path string) (any, bool) {
	for _, key := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[key]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func reqJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestTranslateSystem(t *testing.T) {
	runReqCases(t, []reqCase{
		{name: "messages system string to chat", from: Messages, to: Chat,
			body: `{"model":"c","max_tokens":10,"system":"S","messages":[{"role":"user","content":"hi"}]}`,
			want: map[string]string{"messages.0": `{"role":"system","content":"S"}`, "messages.1.role": `"user"`}},
		{name: "messages system blocks to responses instructions", from: Messages, to: Responses,
			body: `{"model":"c","max_tokens":10,"system":[{"type":"text","text":"S1"},{"type":"text","text":"S2"}],"messages":[{"role":"user","content":"hi"}]}`,
			want: map[string]string{"instructions": `"S1\n\nS2"`, "input.0.role": `"user"`}},
		{name: "chat leading system and developer to messages system", from: Chat, to: Messages,
			body: `{"model":"g","messages":[{"role":"system","content":"A"},{"role":"developer","content":[{"type":"text","text":"B"}]},{"role":"user","content":"hi"}]}`,
			want: map[string]string{"system": `[{"type":"text","text":"A"},{"type":"text","text":"B"}]`, "messages.0.role": `"user"`, "messages.1": "-"}},
		{name: "responses instructions and developer item to messages system", from: Responses, to: Messages,
			body: `{"model":"g","instructions":"I","input":[{"role":"developer","content":"D"},{"role":"user","content":"hi"}]}`,
			want: map[string]string{"system": `[{"type":"text","text":"I"},{"type":"text","text":"D"}]`, "messages.0.content.0.text": `"hi"`}},
		{name: "responses leading system item to chat system", from: Responses, to: Chat,
			body: `{"model":"g","input":[{"type":"message","role":"system","content":[{"type":"input_text","text":"S"}]},{"role":"user","content":"hi"}]}`,
			want: map[string]string{"messages.0": `{"role":"system","content":"S"}`}},
		{name: "chat late system after a tool call goes after its result", from: Chat, to: Messages,
			body: `{"model":"g","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"system","content":"remember"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`,
			want: map[string]string{"messages.2.role": `"user"`, "messages.2.content.0.type": `"tool_result"`,
				"messages.2.content.1": `{"type":"text","text":"remember"}`, "messages.3": "-"}},
		{name: "responses late developer item to chat user after tool", from: Responses, to: Chat,
			body: `{"model":"g","input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},{"role":"developer","content":"note"},{"type":"function_call_output","call_id":"c1","output":"r"}]}`,
			want: map[string]string{"messages.2": `{"role":"tool","tool_call_id":"c1","content":"r"}`, "messages.3": `{"role":"user","content":"note"}`}},
		{name: "chat late system with no results to responses user", from: Chat, to: Responses,
			body: `{"model":"g","messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a"},{"role":"system","content":"late"}]}`,
			want: map[string]string{"input.2.role": `"user"`, "input.2.content.0.text": `"late"`, "instructions": "-"}},
	})
}

func TestTranslateContent(t *testing.T) {
	runReqCases(t, []reqCase{
		{name: "messages base64 image to chat data URL", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD"}},{"type":"text","text":"what"}]}]}`,
			want: map[string]string{"messages.0.content": `[{"type":"image_url","image_url":{"url":"data:image/png;base64,QUJD"}},{"type":"text","text":"what"}]`}},
		{name: "messages URL image to responses input_image", from: Messages, to: Responses,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":{"type":"url","url":"https://x.test/a.png"}}]}]}`,
			want: map[string]string{"input.0.content.0": `{"type":"input_image","image_url":"https://x.test/a.png"}`}},
		{name: "chat data URL image to messages base64", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,QUJD","detail":"high"}}]}]}`,
			want: map[string]string{"messages.0.content.0": `{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"QUJD"}}`}},
		{name: "chat https image to messages URL source", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x.test/a.png"}}]}]}`,
			want: map[string]string{"messages.0.content.0.source": `{"type":"url","url":"https://x.test/a.png"}`}},
		{name: "messages PDF document to chat file", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","title":"a.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]}]}`,
			want: map[string]string{"messages.0.content.0": `{"type":"file","file":{"file_data":"data:application/pdf;base64,JVBE","filename":"a.pdf"}}`}},
		{name: "messages PDF document to responses input_file", from: Messages, to: Responses,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]}]}`,
			want: map[string]string{"input.0.content.0.type": `"input_file"`, "input.0.content.0.file_data": `"data:application/pdf;base64,JVBE"`}},
		{name: "responses input_file to messages document", from: Responses, to: Messages,
			body: `{"input":[{"role":"user","content":[{"type":"input_file","filename":"r.pdf","file_data":"data:application/pdf;base64,JVBE"}]}]}`,
			want: map[string]string{"messages.0.content.0": `{"type":"document","title":"r.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}`}},
		{name: "chat file to messages document", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":[{"type":"file","file":{"filename":"f.pdf","file_data":"data:application/pdf;base64,JVBE"}}]}]}`,
			want: map[string]string{"messages.0.content.0.source.data": `"JVBE"`, "messages.0.content.0.type": `"document"`}},
		{name: "blank text never reaches messages", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"  \n"},{"type":"text","text":"hi"}]},{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":" "}]}`,
			want: map[string]string{"messages.0.content": `[{"type":"text","text":"hi"}]`, "messages.1.content.0.type": `"tool_use"`,
				"messages.1.content.1": "-", "messages.2.content": `[{"type":"tool_result","tool_use_id":"c"}]`}},
		{name: "blank system never reaches messages", from: Responses, to: Messages,
			body: `{"instructions":" ","input":"hi"}`,
			want: map[string]string{"system": "-", "messages.0.content.0.text": `"hi"`}},
	})
}

func TestTranslateTools(t *testing.T) {
	long := strings.Repeat("t", 70)
	runReqCases(t, []reqCase{
		{name: "messages tools to chat functions", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"get","description":"d","input_schema":{"type":"object","properties":{"a":{"type":"string"}}}}]}`,
			want: map[string]string{"tools.0": `{"type":"function","function":{"name":"get","description":"d","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}}`}},
		{name: "messages tools to responses functions, not strict", from: Messages, to: Responses,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"get","input_schema":{"type":"object"}}]}`,
			want: map[string]string{"tools.0": `{"type":"function","name":"get","parameters":{"type":"object"},"strict":false}`}},
		{name: "chat tool without parameters to messages empty schema", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"now","description":"d"}}]}`,
			want: map[string]string{"tools.0": `{"name":"now","description":"d","input_schema":{"type":"object","properties":{}}}`}},
		{name: "messages any to chat required", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"any"}}`,
			want: map[string]string{"tool_choice": `"required"`}},
		{name: "messages named tool to responses", from: Messages, to: Responses,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"tool","name":"f"}}`,
			want: map[string]string{"tool_choice": `{"type":"function","name":"f"}`}},
		{name: "chat required to messages any", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"}`,
			want: map[string]string{"tool_choice": `{"type":"any"}`}},
		{name: "chat named to messages tool", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
			want: map[string]string{"tool_choice": `{"type":"tool","name":"f"}`}},
		{name: "responses none to messages none", from: Responses, to: Messages,
			body: `{"input":"hi","tools":[{"type":"function","name":"f"}],"tool_choice":"none"}`,
			want: map[string]string{"tool_choice": `{"type":"none"}`}},
		{name: "disable_parallel_tool_use to parallel_tool_calls false", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"auto","disable_parallel_tool_use":true}}`,
			want: map[string]string{"parallel_tool_calls": `false`, "tool_choice": `"auto"`}},
		{name: "parallel_tool_calls false to disable_parallel_tool_use", from: Responses, to: Messages,
			body: `{"input":"hi","tools":[{"type":"function","name":"f"}],"parallel_tool_calls":false}`,
			want: map[string]string{"tool_choice": `{"type":"auto","disable_parallel_tool_use":true}`}},
		{name: "long tool name hashed for openai", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"` + long + `","input":{}}]}],"tools":[{"name":"` + long + `","input_schema":{}}]}`,
			want: map[string]string{"tools.0.function.name": `"` + toolName(long, Chat) + `"`,
				"messages.1.tool_calls.0.function.name": `"` + toolName(long, Chat) + `"`},
			check: func(t *testing.T, tr *Translation) {
				up := toolName(long, Chat)
				if len(up) != 64 || up[:56] != long[:55]+"_" || tr.clientTool(up).Name != long {
					t.Errorf("upstream name %q maps back to %+v", up, tr.clientTool(up))
				}
			}},
		{name: "custom tool to chat function with input", from: Responses, to: Chat,
			body: `{"input":[{"role":"user","content":"patch"},{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin"},{"type":"custom_tool_call_output","call_id":"c1","output":"done"}],"tools":[{"type":"custom","name":"apply_patch","description":"p","format":{"type":"grammar"}}]}`,
			want: map[string]string{"tools.0.function.parameters": string(customSchema),
				"messages.1.tool_calls.0.function.arguments": `"{\"input\":\"*** Begin\"}"`,
				"messages.2": `{"role":"tool","tool_call_id":"c1","content":"done"}`},
			check: func(t *testing.T, tr *Translation) {
				if got := tr.clientTool("apply_patch"); !got.Custom {
					t.Errorf("clientTool = %+v, want Custom", got)
				}
			}},
		{name: "custom tool call to messages tool_use", from: Responses, to: Messages,
			body: `{"input":[{"role":"user","content":"patch"},{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"x"}],"tools":[{"type":"custom","name":"apply_patch"}]}`,
			want: map[string]string{"messages.1.content.0": `{"type":"tool_use","id":"c1","name":"apply_patch","input":{"input":"x"}}`,
				"tools.0.input_schema": string(customSchema)}},
		{name: "namespace tools flattened", from: Responses, to: Messages,
			body: `{"input":[{"role":"user","content":"go"},{"type":"function_call","call_id":"c1","namespace":"agents","name":"spawn","arguments":"{\"n\":1}"}],"tools":[{"type":"namespace","name":"agents","tools":[{"type":"function","name":"spawn","parameters":{"type":"object"}}]}]}`,
			want: map[string]string{"tools.0.name": `"agents__spawn"`, "messages.1.content.0.name": `"agents__spawn"`},
			check: func(t *testing.T, tr *Translation) {
				if got := tr.clientTool("agents__spawn"); got.Name != "spawn" || got.Namespace != "agents" {
					t.Errorf("clientTool = %+v", got)
				}
			}},
	})
}

func ExampleTranslate() {
	body := `{"model":"claude","max_tokens":256,"system":"Be brief.","messages":[{"role":"user","content":"Hi"}],"top_k":5}`
	tr, err := Translate(Messages, []byte(body), Target{API: Chat, Model: "gpt-5"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(tr.Body))
	fmt.Println(tr.Dropped)
	// Output:
	// {"model":"gpt-5","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"max_tokens":256}
	// [top_k]
}
