package wire

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestTranslateToolResults(t *testing.T) {
	runReqCases(t, []reqCase{
		{name: "empty arguments to input {}", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":""}},{"id":"b","type":"function","function":{"name":"f","arguments":"{bad"}}]},{"role":"tool","tool_call_id":"a","content":"1"},{"role":"tool","tool_call_id":"b","content":"2"}]}`,
			want: map[string]string{"messages.1.content.0.input": `{}`, "messages.1.content.1.input": `{}`}},
		{name: "text before tool calls on chat", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"look"},{"type":"tool_use","id":"t1","name":"f","input":{"x":1}}]}]}`,
			want: map[string]string{"messages.1": `{"role":"assistant","content":"look","tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]}`}},
		{name: "each result one tool message right after the call", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"tool_use","id":"t2","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"one"},{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"two"}]},{"type":"text","text":"next"}]}]}`,
			want: map[string]string{"messages.2": `{"role":"tool","tool_call_id":"t1","content":"one"}`,
				"messages.3": `{"role":"tool","tool_call_id":"t2","content":"two"}`, "messages.4": `{"role":"user","content":"next"}`}},
		{name: "results to function_call_output", from: Messages, to: Responses,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"one"}]}]}`,
			want: map[string]string{"input.1": `{"type":"function_call","call_id":"t1","name":"f","arguments":"{}"}`,
				"input.2": `{"type":"function_call_output","call_id":"t1","output":"one"}`}},
		{name: "consecutive tool messages to one user turn", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"1"},{"role":"tool","tool_call_id":"b","content":"2"},{"role":"user","content":"more"}]}`,
			want: map[string]string{"messages.2.content": `[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"1"}]},{"type":"tool_result","tool_use_id":"b","content":[{"type":"text","text":"2"}]},{"type":"text","text":"more"}]`,
				"messages.3": "-"}},
		{name: "is_error to Error prefix", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"boom"}]}]}`,
			want: map[string]string{"messages.2.content": `"Error: boom"`}},
		{name: "Error prefix to is_error", from: Responses, to: Messages,
			body: `{"input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"Error: boom"}]}`,
			want: map[string]string{"messages.2.content.0": `{"type":"tool_result","tool_use_id":"c","content":[{"type":"text","text":"boom"}],"is_error":true}`}},
		{name: "image in a tool result to a following chat user message", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"shot","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"here"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QQ=="}}]}]}]}`,
			want: map[string]string{"messages.2": `{"role":"tool","tool_call_id":"t1","content":"here"}`,
				"messages.3": `{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,QQ=="}}]}`}},
		{name: "image in a tool result stays in responses output", from: Messages, to: Responses,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"shot","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QQ=="}}]}]}]}`,
			want: map[string]string{"input.2.output": `[{"type":"input_image","image_url":"data:image/png;base64,QQ=="}]`}},
	})
}

func TestTranslateIDs(t *testing.T) {
	longID := "call_" + strings.Repeat("9", 70)
	id64 := "fc_" + strings.Repeat("6", 61)
	chatID := id64[:31] + "_" + sha8(id64) // 40 bytes
	runReqCases(t, []reqCase{
		{name: "id with bytes messages refuses is mapped on call and result", from: Chat, to: Messages,
			body: `{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"call.a/1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call.a/1","content":"r"}]}`,
			want: map[string]string{"messages.1.content.0.id": `"` + mapID("call.a/1", Messages) + `"`,
				"messages.2.content.0.tool_use_id": `"` + mapID("call.a/1", Messages) + `"`}},
		{name: "long id is mapped for responses", from: Messages, to: Responses,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"` + longID + `","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + longID + `","content":"r"}]}]}`,
			want: map[string]string{"input.1.call_id": `"` + mapID(longID, Responses) + `"`, "input.2.call_id": `"` + mapID(longID, Responses) + `"`}},
		{name: "id over 40 bytes is mapped for chat on call and result", from: Responses, to: Chat,
			body: `{"input":[{"role":"user","content":"q"},{"type":"function_call","call_id":"` + id64 + `","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"` + id64 + `","output":"r"}]}`,
			want: map[string]string{"messages.1.tool_calls.0.id": `"` + mapID(id64, Chat) + `"`, "messages.2.tool_call_id": `"` + mapID(id64, Chat) + `"`},
			check: func(t *testing.T, tr *Translation) {
				if len(mapID(id64, Chat)) != 40 {
					t.Errorf("chat id %q: want 40 bytes", mapID(id64, Chat))
				}
			}},
		{name: "messages id over 40 bytes is mapped for chat", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"` + id64 + `","name":"f","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + id64 + `","content":"r"}]}]}`,
			want: map[string]string{"messages.1.tool_calls.0.id": `"` + chatID + `"`, "messages.2.tool_call_id": `"` + chatID + `"`}},
		{name: "id over 40 bytes unchanged for responses", from: Chat, to: Responses,
			body: `{"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"` + id64 + `","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"` + id64 + `","content":"r"}]}`,
			want: map[string]string{"input.1.call_id": `"` + id64 + `"`, "input.2.call_id": `"` + id64 + `"`}},
		{name: "accepted id unchanged", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01A","name":"f","input":{}}]}]}`,
			want: map[string]string{"messages.1.tool_calls.0.id": `"toolu_01A"`}},
	})
}

func TestTranslateLimits(t *testing.T) {
	hello := `"messages":[{"role":"user","content":"hi"}]`
	runReqCases(t, []reqCase{
		{name: "messages gets 4096 when none is set", from: Chat, to: Messages, body: `{` + hello + `}`,
			want: map[string]string{"max_tokens": `4096`}},
		{name: "messages gets the target default", from: Chat, to: Messages, target: Target{DefaultMaxTokens: 8192},
			body: `{` + hello + `}`, want: map[string]string{"max_tokens": `8192`}},
		{name: "max_completion_tokens to max_tokens", from: Chat, to: Messages,
			body: `{"max_completion_tokens":500,` + hello + `}`, want: map[string]string{"max_tokens": `500`}},
		{name: "max_tokens to chat max_tokens by default", from: Messages, to: Chat,
			body: `{"max_tokens":700,` + hello + `}`, want: map[string]string{"max_tokens": `700`, "max_completion_tokens": "-"}},
		{name: "max_tokens to chat max_completion_tokens", from: Messages, to: Chat, target: Target{MaxTokensField: "max_completion_tokens"},
			body: `{"max_tokens":700,` + hello + `}`, want: map[string]string{"max_completion_tokens": `700`, "max_tokens": "-"}},
		{name: "max_tokens to max_output_tokens", from: Messages, to: Responses,
			body: `{"max_tokens":700,` + hello + `}`, want: map[string]string{"max_output_tokens": `700`}},
		{name: "max_output_tokens to max_tokens", from: Responses, to: Messages,
			body: `{"max_output_tokens":300,"input":"hi"}`, want: map[string]string{"max_tokens": `300`}},
		{name: "temperature over 1 to messages as 1", from: Chat, to: Messages,
			body: `{"temperature":1.6,` + hello + `}`, want: map[string]string{"temperature": `1`}},
		{name: "top_p beside temperature dropped for messages", from: Chat, to: Messages,
			body: `{"temperature":0.5,"top_p":0.9,` + hello + `}`,
			want: map[string]string{"temperature": `0.5`, "top_p": "-"}, dropped: []string{"top_p"}},
		{name: "top_p alone kept for messages", from: Responses, to: Messages,
			body: `{"top_p":0.9,"input":"hi"}`, want: map[string]string{"top_p": `0.9`}, kept: []string{"top_p"}},
		{name: "top_k never reaches openai", from: Messages, to: Chat,
			body: `{"max_tokens":10,"top_k":5,` + hello + `}`, want: map[string]string{"top_k": "-"}, dropped: []string{"top_k"}},
		{name: "chat stop string to stop_sequences", from: Chat, to: Messages,
			body: `{"stop":"END",` + hello + `}`, want: map[string]string{"stop_sequences": `["END"]`}},
		{name: "stop_sequences to chat stop", from: Messages, to: Chat,
			body: `{"max_tokens":10,"stop_sequences":["a","b"],` + hello + `}`, want: map[string]string{"stop": `["a","b"]`}},
		{name: "stop on a responses target is cut locally", from: Chat, to: Responses,
			body: `{"stop":["X"],` + hello + `}`, want: map[string]string{"stop": "-"}, kept: []string{"stop"},
			check: func(t *testing.T, tr *Translation) {
				if !slices.Equal(tr.stops, []string{"X"}) {
					t.Errorf("stops = %q", tr.stops)
				}
			}},
	})
}

func TestTranslateReasoning(t *testing.T) {
	thinkingHistory := `"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"sig"},{"type":"redacted_thinking","data":"xx"},{"type":"text","text":"a"}]},{"role":"user","content":"again"}]`
	reasoningHistory := `"input":[{"role":"user","content":"q"},{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"enc"},{"role":"assistant","content":[{"type":"output_text","text":"a"}]},{"role":"user","content":"again"}]`
	toolHistory := `"messages":[{"role":"user","content":"q"},{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]`
	runReqCases(t, []reqCase{
		{name: "thinking blocks never reach chat", from: Messages, to: Chat, body: `{"max_tokens":10,` + thinkingHistory + `}`,
			want: map[string]string{"messages.1": `{"role":"assistant","content":"a"}`}},
		{name: "thinking blocks never reach responses", from: Messages, to: Responses, body: `{"max_tokens":10,` + thinkingHistory + `}`,
			want: map[string]string{"input.1": `{"type":"message","role":"assistant","content":"a"}`, "input.2.role": `"user"`}},
		{name: "reasoning items never reach messages", from: Responses, to: Messages, body: `{` + reasoningHistory + `}`,
			want: map[string]string{"messages.1.content": `[{"type":"text","text":"a"}]`}},
		{name: "reasoning items never reach chat", from: Responses, to: Chat, body: `{` + reasoningHistory + `}`,
			want: map[string]string{"messages.1": `{"role":"assistant","content":"a"}`}},
		{name: "budget 2048 is low", from: Messages, to: Chat,
			body: `{"max_tokens":9000,"thinking":{"type":"enabled","budget_tokens":2048},"messages":[{"role":"user","content":"q"}]}`,
			want: map[string]string{"reasoning_effort": `"low"`}},
		{name: "budget 8192 is medium", from: Messages, to: Responses,
			body: `{"max_tokens":9000,"thinking":{"type":"enabled","budget_tokens":8192},"messages":[{"role":"user","content":"q"}]}`,
			want: map[string]string{"reasoning": `{"effort":"medium"}`}},
		{name: "budget over 8192 is high", from: Messages, to: Chat,
			body: `{"max_tokens":20000,"thinking":{"type":"enabled","budget_tokens":10000},"messages":[{"role":"user","content":"q"}]}`,
			want: map[string]string{"reasoning_effort": `"high"`}},
		{name: "high effort to budget 16384", from: Chat, to: Messages,
			body: `{"max_tokens":32000,"reasoning_effort":"high","messages":[{"role":"user","content":"q"}]}`,
			want: map[string]string{"thinking": `{"type":"enabled","budget_tokens":16384}`}},
		{name: "low effort to budget 1024", from: Responses, to: Messages,
			body: `{"max_output_tokens":32000,"reasoning":{"effort":"low"},"input":"q"}`,
			want: map[string]string{"thinking": `{"type":"enabled","budget_tokens":1024}`}},
		{name: "budget kept below max_tokens", from: Chat, to: Messages,
			body: `{"max_tokens":8000,"reasoning_effort":"high","messages":[{"role":"user","content":"q"}]}`,
			want: map[string]string{"thinking": `{"type":"enabled","budget_tokens":7999}`}},
		{name: "thinking left out when max_tokens is too small", from: Chat, to: Messages,
			body: `{"max_tokens":1000,"reasoning_effort":"medium","messages":[{"role":"user","content":"q"}]}`,
			want: map[string]string{"thinking": "-"}, dropped: []string{"thinking"}},
		{name: "thinking left out when the last tool turn has no thinking block", from: Chat, to: Messages,
			body: `{"max_tokens":32000,"reasoning_effort":"medium",` + toolHistory + `}`,
			want: map[string]string{"thinking": "-"}},
		{name: "temperature left out beside thinking", from: Chat, to: Messages,
			body: `{"max_tokens":32000,"temperature":0.2,"reasoning_effort":"medium","messages":[{"role":"user","content":"q"}]}`,
			want: map[string]string{"temperature": "-", "thinking.type": `"enabled"`}},
		{name: "no signature invented", from: Responses, to: Messages, body: `{` + reasoningHistory + `}`,
			check: func(t *testing.T, tr *Translation) {
				if strings.Contains(string(tr.Body), "signature") || strings.Contains(string(tr.Body), "thinking") {
					t.Errorf("body carries thinking: %s", tr.Body)
				}
			}},
	})
}

func TestTranslateOther(t *testing.T) {
	runReqCases(t, []reqCase{
		{name: "metadata.user_id to user", from: Messages, to: Chat,
			body: `{"max_tokens":10,"metadata":{"user_id":"u1"},"messages":[{"role":"user","content":"q"}]}`,
			want: map[string]string{"user": `"u1"`, "metadata": "-"}},
		{name: "user to metadata.user_id", from: Responses, to: Messages,
			body: `{"user":"u2","input":"q"}`, want: map[string]string{"metadata": `{"user_id":"u2"}`}},
		{name: "cache_control never reaches openai, named once", from: Messages, to: Responses,
			body: `{"max_tokens":10,"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[{"type":"text","text":"q","cache_control":{"type":"ephemeral"}}]}],"tools":[{"name":"f","input_schema":{},"cache_control":{"type":"ephemeral"}}]}`,
			want: map[string]string{"input.0.content.0": `{"type":"input_text","text":"q"}`},
			check: func(t *testing.T, tr *Translation) {
				if strings.Contains(string(tr.Body), "cache_control") || strings.Count(strings.Join(tr.Dropped, ","), "cache_control") != 1 {
					t.Errorf("Dropped %q, body %s", tr.Dropped, tr.Body)
				}
			}},
		{name: "stream kept and usage asked", from: Messages, to: Chat, target: Target{StreamUsage: true},
			body: `{"max_tokens":10,"stream":true,"messages":[{"role":"user","content":"q"}]}`,
			want: map[string]string{"stream": `true`, "stream_options": `{"include_usage":true}`, "model": `"up"`}},
		{name: "chat client's include_usage recorded", from: Chat, to: Messages,
			body: `{"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"q"}]}`,
			want: map[string]string{"stream": `true`, "stream_options": "-"},
			check: func(t *testing.T, tr *Translation) {
				if !tr.streamUsage || tr.estimate <= 0 {
					t.Errorf("streamUsage %v estimate %d", tr.streamUsage, tr.estimate)
				}
			}},
		{name: "chat json_schema to responses text.format", from: Chat, to: Responses,
			body: `{"messages":[{"role":"user","content":"q"}],"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object"},"strict":true}}}`,
			want: map[string]string{"text": `{"format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true}}`}},
		{name: "responses text.format to output_config", from: Responses, to: Messages,
			body: `{"input":"q","text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true}}}`,
			want: map[string]string{"output_config": `{"format":{"type":"json_schema","schema":{"type":"object"}}}`}},
		{name: "output_config to chat response_format", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"}],"output_config":{"format":{"type":"json_schema","schema":{"type":"object"}}}}`,
			want: map[string]string{"response_format.type": `"json_schema"`, "response_format.json_schema.schema": `{"type":"object"}`, "response_format.json_schema.name": `"response"`}},
		{name: "web_search_call in history as text", from: Responses, to: Messages,
			body: `{"input":[{"role":"user","content":"q"},{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"go 1.26"}},{"role":"assistant","content":"found"}]}`,
			want: map[string]string{"messages.1.content": `[{"type":"text","text":"[web_search_call]\nquery: go 1.26"},{"type":"text","text":"found"}]`}},
		{name: "server_tool_use and its result as text", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"server_tool_use","id":"srv_1","name":"web_search","input":{"query":"go"}},{"type":"web_search_tool_result","tool_use_id":"srv_1","content":[{"type":"web_search_result","title":"Go","url":"https://go.dev","encrypted_content":"zz"}]},{"type":"text","text":"ok"}]}]}`,
			want: map[string]string{"messages.1": `{"role":"assistant","content":"[server_tool_use web_search]\ninput: {\"query\":\"go\"}\n\n[web_search_tool_result]\nresult: Go https://go.dev\n\nok"}`}},
		{name: "search_result with its source string as text", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":[{"type":"search_result","source":"https://go.dev/doc","title":"Go docs","content":[{"type":"text","text":"Go 1.26"}],"citations":{"enabled":true}},{"type":"text","text":"q"}]}]}`,
			want: map[string]string{"messages.0.content": `[{"type":"text","text":"Go docs\nhttps://go.dev/doc\nGo 1.26"},{"type":"text","text":"q"}]`}},
		{name: "an image with a source string is not served", from: Messages, to: Chat,
			body: `{"max_tokens":10,"messages":[{"role":"user","content":[{"type":"image","source":"https://x/y.png"}]}]}`, skip: "source"},
	})
}

func TestTranslateSkips(t *testing.T) {
	q := `"messages":[{"role":"user","content":"q"}]`
	runReqCases(t, []reqCase{
		{name: "n over 1", from: Chat, to: Messages, body: `{"n":2,` + q + `}`, skip: "n"},
		{name: "logprobs", from: Chat, to: Messages, body: `{"logprobs":true,` + q + `}`, skip: "logprobs"},
		{name: "top_logprobs", from: Responses, to: Chat, body: `{"top_logprobs":3,"input":"q"}`, skip: "top_logprobs"},
		{name: "audio output modality", from: Chat, to: Responses, body: `{"modalities":["text","audio"],` + q + `}`, skip: "modalities"},
		{name: "audio parameter", from: Chat, to: Messages, body: `{"audio":{"voice":"alloy","format":"wav"},` + q + `}`, skip: "audio"},
		{name: "json_object", from: Chat, to: Messages, body: `{"response_format":{"type":"json_object"},` + q + `}`, skip: "response_format"},
		{name: "responses json_object", from: Responses, to: Messages, body: `{"text":{"format":{"type":"json_object"}},"input":"q"}`, skip: "text.format"},
		{name: "prompt", from: Responses, to: Messages, body: `{"prompt":{"id":"pmpt_1"},"input":"q"}`, skip: "prompt"},
		{name: "conversation", from: Responses, to: Chat, body: `{"conversation":"conv_1","input":"q"}`, skip: "conversation"},
		{name: "background", from: Responses, to: Messages, body: `{"background":true,"input":"q"}`, skip: "background"},
		{name: "previous_response_id", from: Responses, to: Messages, body: `{"previous_response_id":"resp_1","input":"q"}`, skip: "previous_response_id"},
		{name: "chat file id", from: Chat, to: Messages, body: `{"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`, skip: "file_id"},
		{name: "responses file id", from: Responses, to: Messages, body: `{"input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`, skip: "file_id"},
		{name: "messages file source", from: Messages, to: Chat, body: `{"max_tokens":10,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_1"}}]}]}`, skip: "file_id"},
		{name: "tool_choice names a built-in tool", from: Responses, to: Messages,
			body: `{"input":"q","tools":[{"type":"web_search"}],"tool_choice":{"type":"web_search"}}`, skip: "tool_choice"},
		{name: "required with only built-in tools", from: Responses, to: Messages,
			body: `{"input":"q","tools":[{"type":"web_search"}],"tool_choice":"required"}`, skip: "tool_choice"},
		{name: "messages tool choice names a server tool", from: Messages, to: Chat,
			body: `{"max_tokens":10,` + q + `,"tools":[{"type":"web_search_20250305","name":"web_search"}],"tool_choice":{"type":"tool","name":"web_search"}}`, skip: "tool_choice"},
		{name: "messages any with only server tools", from: Messages, to: Responses,
			body: `{"max_tokens":10,` + q + `,"tools":[{"type":"bash_20250124","name":"bash"}],"tool_choice":{"type":"any"}}`, skip: "tool_choice"},
	})
}

func TestTranslateDrops(t *testing.T) {
	q := `"messages":[{"role":"user","content":"q"}]`
	runReqCases(t, []reqCase{
		{name: "chat parameters that change nothing the client reads", from: Chat, to: Messages,
			body:    `{"seed":1,"presence_penalty":0.1,"frequency_penalty":0.2,"logit_bias":{"1":2},"service_tier":"auto","store":true,"prompt_cache_key":"k","foo":1,` + q + `}`,
			want:    map[string]string{"seed": "-", "foo": "-", "service_tier": "-"},
			dropped: []string{"seed", "presence_penalty", "frequency_penalty", "logit_bias", "service_tier", "store", "prompt_cache_key", "foo"}},
		{name: "chat known fields not dropped", from: Chat, to: Responses,
			body: `{"model":"g","tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"auto","parallel_tool_calls":true,"max_tokens":5,"max_completion_tokens":6,"temperature":0.1,"top_p":0.5,"stop":"x","stream":true,"stream_options":{"include_usage":true},"metadata":{"a":"b"},"user":"u","reasoning_effort":"low","response_format":{"type":"text"},"n":1,"logprobs":false,"store":false,` + q + `}`,
			want: map[string]string{"max_output_tokens": `16`},
			check: func(t *testing.T, tr *Translation) {
				if len(tr.Dropped) != 0 {
					t.Errorf("Dropped = %q", tr.Dropped)
				}
			}},
		{name: "responses known fields not dropped, include and truncation silent", from: Responses, to: Chat,
			body: `{"model":"g","input":"q","instructions":"i","max_output_tokens":50,"temperature":1,"top_p":1,"stream":false,"metadata":{},"user":"u","reasoning":{"effort":"low"},"text":{"format":{"type":"text"}},"include":["reasoning.encrypted_content"],"truncation":"auto","store":false,"parallel_tool_calls":true}`,
			check: func(t *testing.T, tr *Translation) {
				if len(tr.Dropped) != 0 {
					t.Errorf("Dropped = %q", tr.Dropped)
				}
			}},
		{name: "messages known fields not dropped", from: Messages, to: Chat,
			body: `{"model":"c","max_tokens":10,"system":"s","temperature":0.3,"stop_sequences":["x"],"stream":false,"metadata":{"user_id":"u"},"thinking":{"type":"disabled"},"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"auto"},` + q + `}`,
			check: func(t *testing.T, tr *Translation) {
				if len(tr.Dropped) != 0 {
					t.Errorf("Dropped = %q", tr.Dropped)
				}
			}},
		{name: "responses built-in tools offered are dropped by type", from: Responses, to: Messages,
			body:    `{"input":"q","tools":[{"type":"web_search"},{"type":"function","name":"f"},{"type":"local_shell"}],"service_tier":"flex","prompt_cache_key":"k","store":true}`,
			want:    map[string]string{"tools": `[{"name":"f","input_schema":{"type":"object","properties":{}}}]`},
			dropped: []string{"web_search", "local_shell", "service_tier", "prompt_cache_key", "store"}},
		{name: "anthropic server tools offered are dropped by type", from: Messages, to: Chat,
			body:    `{"max_tokens":10,` + q + `,"tools":[{"type":"web_search_20250305","name":"web_search"},{"type":"custom","name":"f","input_schema":{}},{"type":"text_editor_20250124","name":"str_replace_editor"}],"service_tier":"auto"}`,
			want:    map[string]string{"tools.0.function.name": `"f"`, "tools.1": "-"},
			dropped: []string{"web_search_20250305", "text_editor_20250124", "service_tier"}},
	})
}

func TestTranslateErrors(t *testing.T) {
	tests := []struct {
		name      string
		from      API
		to        API
		body      string
		wantParam string
		same      bool
	}{
		{name: "not JSON", from: Chat, to: Messages, body: `{`},
		{name: "messages not a list", from: Chat, to: Messages, body: `{"messages":"x"}`, wantParam: "messages"},
		{name: "bad content", from: Messages, to: Chat, body: `{"messages":[{"role":"user","content":5}]}`, wantParam: "messages.0.content"},
		{name: "bad input", from: Responses, to: Chat, body: `{"input":5}`, wantParam: "input"},
		// A content list the one-pass reader cannot read sends the body to
		// encoding/json; the decoder then names the list.
		{name: "bad block", from: Messages, to: Chat, body: `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},7]}]}`, wantParam: "messages.0.content"},
		{name: "bad part", from: Chat, to: Messages, body: `{"messages":[{"role":"user","content":"a"},{"role":"user","content":[1]}]}`, wantParam: "messages.1.content"},
		{name: "bad item part", from: Responses, to: Chat, body: `{"input":[{"role":"user","content":[{"type":"input_text","text":1}]}]}`, wantParam: "content"},
		{name: "bad output", from: Responses, to: Messages, body: `{"input":[{"type":"function_call_output","call_id":"c","output":[true]}]}`, wantParam: "output"},
		{name: "same wire", from: Chat, to: Chat, body: `{}`, same: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Translate(tt.from, []byte(tt.body), Target{API: tt.to})
			if tt.same {
				if !errors.Is(err, ErrSameWire) {
					t.Fatalf("err = %v, want ErrSameWire", err)
				}
				return
			}
			var reqErr *RequestError
			if !errors.As(err, &reqErr) || reqErr.Param != tt.wantParam {
				t.Fatalf("err = %#v, want RequestError with Param %q", err, tt.wantParam)
			}
		})
	}
}
