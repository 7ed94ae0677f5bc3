package wire

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Upstream answers, one per wire, each with text, a tool call and cached
// tokens.
const (
	messagesToolAnswer = `{"id":"msg_01A","type":"message","role":"assistant","model":"claude-x",
	"content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"Hello"},
	{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Paris"}}],
	"stop_reason":"tool_use","stop_sequence":null,
	"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":20,"cache_creation_input_tokens":3}}`
	chatToolAnswer = `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-5",
	"choices":[{"index":0,"message":{"role":"assistant","content":"Hi","reasoning_content":"think",
	"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{\"a\": 1}"}}]},
	"finish_reason":"tool_calls"}],
	"usage":{"prompt_tokens":100,"completion_tokens":7,"total_tokens":107,
	"prompt_tokens_details":{"cached_tokens":40},"completion_tokens_details":{"reasoning_tokens":2}}}`
	responsesToolAnswer = `{"id":"resp_1","object":"response","status":"completed","model":"gpt-5",
	"output":[{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"xx"},
	{"type":"message","id":"msg_1","role":"assistant","status":"completed",
	"content":[{"type":"output_text","text":"Hi","annotations":[]}]},
	{"type":"function_call","id":"fc_1","call_id":"call_1","name":"f","arguments":"{\"a\":1}","status":"completed"}],
	"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":40},"output_tokens":7,
	"output_tokens_details":{"reasoning_tokens":2},"total_tokens":107}}`
)

// openAIUsage is the usage an OpenAI client reads for chatToolAnswer and
// responsesToolAnswer.
var openAIUsage = usageView{Prompt: 100, Cached: 40, Output: 7, Reasoning: 2, Total: 107}

// messagesUsageOfOpenAI is the usage a Messages client reads for them.
var messagesUsageOfOpenAI = usageView{Input: 60, CacheRead: 40, Output: 7}

// openAIUsageOfMessages is what an OpenAI client reads for
// messagesToolAnswer: prompt = 10 + 20 + 3, cached = 20, total = 33 + 5.
var openAIUsageOfMessages = usageView{Prompt: 33, Cached: 20, Output: 5, Total: 38}

// TestResponseAcrossWires translates each wire's answer into each other
// wire and reads it with the client's official SDK: text, tool calls,
// stop reason and usage (GATEWAY §8.4).
func TestResponseAcrossWires(t *testing.T) {
	weather := []callView{{ID: "toolu_01", Name: "get_weather", Args: `{"city":"Paris"}`}}
	f := []callView{{ID: "call_1", Name: "f", Args: `{"a":1}`}}
	tests := []struct {
		name     string
		from, to API
		body     string
		model    string
		want     answerView
	}{
		{name: "messages to chat", from: Chat, to: Messages, body: messagesToolAnswer, model: "claude-x",
			want: answerView{Text: "Hello", Calls: weather, Stop: "tool_calls", Usage: openAIUsageOfMessages}},
		{name: "messages to responses", from: Responses, to: Messages, body: messagesToolAnswer, model: "claude-x",
			want: answerView{Text: "Hello", Calls: weather, Stop: "completed", Usage: openAIUsageOfMessages}},
		{name: "chat to messages", from: Messages, to: Chat, body: chatToolAnswer, model: "gpt-5",
			want: answerView{Text: "Hi", Calls: f, Stop: "tool_use", Usage: messagesUsageOfOpenAI}},
		{name: "chat to responses", from: Responses, to: Chat, body: chatToolAnswer, model: "gpt-5",
			want: answerView{Text: "Hi", Calls: f, Stop: "completed", Usage: openAIUsage}},
		{name: "responses to messages", from: Messages, to: Responses, body: responsesToolAnswer, model: "gpt-5",
			want: answerView{Text: "Hi", Calls: f, Stop: "tool_use", Usage: messagesUsageOfOpenAI}},
		{name: "responses to chat", from: Chat, to: Responses, body: responsesToolAnswer, model: "gpt-5",
			want: answerView{Text: "Hi", Calls: f, Stop: "tool_calls", Usage: openAIUsage}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Translation{From: tt.from, To: Target{API: tt.to, Model: "served"}}
			out, err := tr.Response([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := oracleView(t, tt.from, out, tt.model); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v\n%s", got, tt.want, out)
			}
		})
	}
}

// TestResponseStopReasons checks every row of the stop reason table of
// GATEWAY §8.4, read by the client's SDK.
func TestResponseStopReasons(t *testing.T) {
	msg := func(reason string) string {
		return `{"id":"msg_1","type":"message","model":"c","content":[{"type":"text","text":"x"}],"stop_reason":"` + reason + `"}`
	}
	chat := func(reason, calls string) string {
		return `{"id":"c1","model":"g","choices":[{"message":{"content":"x"` + calls + `},"finish_reason":"` + reason + `"}]}`
	}
	resp := func(status, reason, items string) string {
		return `{"id":"r1","model":"g","status":"` + status + `","incomplete_details":{"reason":"` + reason +
			`"},"output":[{"type":"message","content":[{"type":"output_text","text":"x"}]}` + items + `]}`
	}
	call := `,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]`
	item := `,{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}`
	tests := []struct {
		name     string
		from, to API
		body     string
		want     string
	}{
		{name: "end_turn to chat", from: Chat, to: Messages, body: msg("end_turn"), want: "stop"},
		{name: "stop_sequence to chat", from: Chat, to: Messages, body: msg("stop_sequence"), want: "stop"},
		{name: "pause_turn to chat", from: Chat, to: Messages, body: msg("pause_turn"), want: "stop"},
		{name: "end_turn to responses", from: Responses, to: Messages, body: msg("end_turn"), want: "completed"},
		{name: "pause_turn to responses", from: Responses, to: Messages, body: msg("pause_turn"), want: "completed"},
		{name: "max_tokens to chat", from: Chat, to: Messages, body: msg("max_tokens"), want: "length"},
		{name: "context window to chat", from: Chat, to: Messages, body: msg("model_context_window_exceeded"), want: "length"},
		{name: "max_tokens to responses", from: Responses, to: Messages, body: msg("max_tokens"), want: "incomplete:max_output_tokens"},
		{name: "context window to responses", from: Responses, to: Messages, body: msg("model_context_window_exceeded"), want: "incomplete:max_output_tokens"},
		{name: "refusal to chat", from: Chat, to: Messages, body: msg("refusal"), want: "content_filter"},
		{name: "refusal to responses", from: Responses, to: Messages, body: msg("refusal"), want: "incomplete:content_filter"},
		{name: "chat stop", from: Messages, to: Chat, body: chat("stop", ""), want: "end_turn"},
		{name: "chat stop with a call", from: Messages, to: Chat, body: chat("stop", call), want: "tool_use"},
		{name: "chat tool_calls", from: Messages, to: Chat, body: chat("tool_calls", call), want: "tool_use"},
		{name: "chat tool_calls without a call", from: Messages, to: Chat, body: chat("tool_calls", ""), want: "end_turn"},
		{name: "chat length", from: Messages, to: Chat, body: chat("length", ""), want: "max_tokens"},
		{name: "chat content_filter", from: Messages, to: Chat, body: chat("content_filter", ""), want: "refusal"},
		{name: "chat stop to responses", from: Responses, to: Chat, body: chat("stop", ""), want: "completed"},
		{name: "chat tool_calls to responses", from: Responses, to: Chat, body: chat("tool_calls", call), want: "completed"},
		{name: "chat length to responses", from: Responses, to: Chat, body: chat("length", ""), want: "incomplete:max_output_tokens"},
		{name: "chat content_filter to responses", from: Responses, to: Chat, body: chat("content_filter", ""), want: "incomplete:content_filter"},
		{name: "completed to chat", from: Chat, to: Responses, body: resp("completed", "", ""), want: "stop"},
		{name: "completed with a call to chat", from: Chat, to: Responses, body: resp("completed", "", item), want: "tool_calls"},
		{name: "max_output_tokens to chat", from: Chat, to: Responses, body: resp("incomplete", "max_output_tokens", ""), want: "length"},
		{name: "content_filter to chat", from: Chat, to: Responses, body: resp("incomplete", "content_filter", ""), want: "content_filter"},
		{name: "completed to messages", from: Messages, to: Responses, body: resp("completed", "", ""), want: "end_turn"},
		{name: "completed with a call to messages", from: Messages, to: Responses, body: resp("completed", "", item), want: "tool_use"},
		{name: "max_output_tokens to messages", from: Messages, to: Responses, body: resp("incomplete", "max_output_tokens", ""), want: "max_tokens"},
		{name: "content_filter to messages", from: Messages, to: Responses, body: resp("incomplete", "content_filter", ""), want: "refusal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Translation{From: tt.from, To: Target{API: tt.to}}
			out, err := tr.Response([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			model := map[API]string{Messages: "c", Chat: "g", Responses: "g"}[tt.to]
			if got := oracleView(t, tt.from, out, model); got.Stop != tt.want || got.Text != "x" {
				t.Errorf("stop %q text %q, want %q and x\n%s", got.Stop, got.Text, tt.want, out)
			}
		})
	}
}

// TestResponseMalformed: an answer that cannot be decoded is an error
// wrapping ErrMalformedAnswer.
func TestResponseMalformed(t *testing.T) {
	tests := []struct {
		name string
		to   API
		body string
	}{
		{name: "chat not JSON", to: Chat, body: `not json`},
		{name: "chat without choices", to: Chat, body: `{"id":"x","choices":[]}`},
		{name: "chat array", to: Chat, body: `[1]`},
		{name: "messages error with 200", to: Messages, body: `{"type":"error","error":{"type":"api_error","message":"x"}}`},
		{name: "messages truncated", to: Messages, body: `{"type":"message","content":[`},
		{name: "responses failed", to: Responses, body: `{"id":"r","status":"failed","output":[]}`},
		{name: "responses bad item", to: Responses, body: `{"id":"r","status":"completed","output":[1]}`},
		{name: "empty", to: Responses, body: ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Translation{From: Messages, To: Target{API: tt.to}}
			if tt.to == Messages {
				tr.From = Chat
			}
			out, err := tr.Response([]byte(tt.body))
			if !errors.Is(err, ErrMalformedAnswer) || out != nil {
				t.Errorf("got %s, %v; want ErrMalformedAnswer", out, err)
			}
		})
	}
}

// TestMinted: translated Responses ids are recognised without state.
func TestMinted(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{id: "resp_lxmsg_01", want: true},
		{id: MintedResponsePrefix + "0af3", want: true},
		{id: "resp_0af3", want: false},
		{id: "", want: false},
	}
	for _, tt := range tests {
		if got := Minted(tt.id); got != tt.want {
			t.Errorf("Minted(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
	a, b := mintID(MintedResponsePrefix, ""), mintID(MintedResponsePrefix, "")
	if a == b || !Minted(a) || strings.ContainsAny(a, " .") {
		t.Errorf("random ids %q, %q: want distinct minted ids", a, b)
	}
	if got := mintID("msg_", "chatcmpl-a.b"); got != "msg_chatcmpl-a_b" {
		t.Errorf("mintID = %q, want msg_chatcmpl-a_b", got)
	}
}

// TestResponseContent checks the content rules of GATEWAY §8.4: tool
// names and call ids mapped back, custom and namespace tools, arguments,
// stop sequences cut locally, refusals as text, the served model.
func TestResponseContent(t *testing.T) {
	long := strings.Repeat("very_long_tool_name_", 4)
	chat := func(content, calls string) string {
		return `{"id":"c1","choices":[{"message":{"content":` + content + `,"tool_calls":[` + calls +
			`]},"finish_reason":"tool_calls"}]}`
	}
	call := func(id, name, args string) string {
		return `{"id":"` + id + `","type":"function","function":{"name":"` + name + `","arguments":` + args + `}}`
	}
	runResponseCases(t, []responseCase{
		{name: "hashed name back to chat", from: Chat, to: Messages,
			tools: map[string]Tool{toolName(long, Chat): {Name: long}},
			body: `{"id":"m","type":"message","content":[{"type":"tool_use","id":"toolu_1","name":"` +
				toolName(long, Chat) + `","input":{}}],"stop_reason":"tool_use"}`,
			want: answerView{Calls: []callView{{ID: "toolu_1", Name: long, Args: `{}`}}, Stop: "tool_calls"}},
		{name: "namespace tool back to responses", from: Responses, to: Chat,
			tools: map[string]Tool{"agents__spawn": {Name: "spawn", Namespace: "agents"}},
			body:  chat(`null`, call("call_9", "agents__spawn", `"{\"n\":2}"`)),
			want:  answerView{Calls: []callView{{ID: "call_9", Name: "spawn", Namespace: "agents", Args: `{"n":2}`}}, Stop: "completed"}},
		{name: "custom tool back to responses", from: Responses, to: Messages,
			tools: map[string]Tool{"apply_patch": {Name: "apply_patch", Custom: true}},
			body: `{"id":"m","type":"message","content":[{"type":"tool_use","id":"toolu_2","name":"apply_patch",` +
				`"input":{"input":"*** Begin Patch\n"}}],"stop_reason":"tool_use"}`,
			want: answerView{Calls: []callView{{ID: "toolu_2", Name: "apply_patch", Input: "*** Begin Patch\n", Custom: true}}, Stop: "completed"}},
		{name: "call id refused by messages", from: Messages, to: Chat,
			body: chat(`""`, call("call.1:x", "f", `"{}"`)),
			want: answerView{Calls: []callView{{ID: mapID("call.1:x", Messages), Name: "f", Args: `{}`}}, Stop: "tool_use"}},
		{name: "call id too long for responses", from: Responses, to: Chat,
			body: chat(`""`, call(strings.Repeat("c", 70), "f", `"{}"`)),
			want: answerView{Calls: []callView{{ID: mapID(strings.Repeat("c", 70), Responses), Name: "f", Args: `{}`}}, Stop: "completed"}},
		{name: "unparsable arguments", from: Messages, to: Chat,
			body: chat(`null`, call("call_1", "f", `"{\"a\":"`)),
			want: answerView{Calls: []callView{{ID: "call_1", Name: "f", Args: `{}`}}, Stop: "tool_use"}},
		{name: "arguments not an object", from: Messages, to: Chat,
			body: chat(`null`, call("call_1", "f", `"[1]"`)),
			want: answerView{Calls: []callView{{ID: "call_1", Name: "f", Args: `{}`}}, Stop: "tool_use"}},
		{name: "stop sequence cut for messages", from: Messages, to: Responses, stops: []string{"###", "END"},
			body: `{"id":"r","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hello END world ###"}]},` +
				`{"type":"function_call","call_id":"c","name":"f","arguments":"{}"}]}`,
			want: answerView{Text: "Hello ", Stop: "stop_sequence", StopSeq: "END"}},
		{name: "stop sequence cut for chat", from: Chat, to: Responses, stops: []string{"END"},
			body: `{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},` +
				`"output":[{"type":"message","content":[{"type":"output_text","text":"a"},{"type":"output_text","text":"bENDc"}]}]}`,
			want: answerView{Text: "ab", Stop: "stop"}},
		{name: "no stop sequence in the text", from: Messages, to: Responses, stops: []string{"END"},
			body: `{"id":"r","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hello"}]}]}`,
			want: answerView{Text: "Hello", Stop: "end_turn"}},
		{name: "chat refusal as text", from: Messages, to: Chat,
			body: `{"id":"c","choices":[{"message":{"content":null,"refusal":"I can't."},"finish_reason":"content_filter"}]}`,
			want: answerView{Text: "I can't.", Stop: "refusal"}},
		{name: "chat content parts", from: Responses, to: Chat,
			body: `{"id":"c","choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},"finish_reason":"stop"}]}`,
			want: answerView{Text: "ab", Stop: "completed"}},
		{name: "responses refusal as text", from: Chat, to: Responses,
			body: `{"id":"r","status":"incomplete","incomplete_details":{"reason":"content_filter"},` +
				`"output":[{"type":"message","content":[{"type":"refusal","refusal":"No."}]}]}`,
			want: answerView{Text: "No.", Stop: "content_filter"}},
		{name: "thinking only to chat", from: Chat, to: Messages,
			body: `{"id":"m","type":"message","content":[{"type":"thinking","thinking":"t","signature":"s"},` +
				`{"type":"redacted_thinking","data":"d"}],"stop_reason":"end_turn"}`,
			want: answerView{Stop: "stop"}},
	})
}

// responseCase is a whole answer of the entry (wire to) and what the
// client (wire from) reads from its translation.
type responseCase struct {
	name  string
	from  API
	to    API
	tools map[string]Tool
	stops []string
	body  string
	want  answerView
}

// runResponseCases translates each answer and decodes it with the client
// wire's official SDK.
func runResponseCases(t *testing.T, cases []responseCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Translation{From: tt.from, To: Target{API: tt.to, Model: "served"}, tools: tt.tools, stops: tt.stops}
			out, err := tr.Response([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			if got := oracleView(t, tt.from, out, "served"); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v\n%s", got, tt.want, out)
			}
		})
	}
}

// TestResponseChatCalls: a chat client's custom tool is called back as a
// custom tool call with its raw input, whichever wire served it, and a
// call id over chat's 40 bytes reaches it mapped (GATEWAY §8.2, ids).
func TestResponseChatCalls(t *testing.T) {
	runResponseCases(t, []responseCase{
		{name: "custom tool back to chat", from: Chat, to: Messages,
			tools: map[string]Tool{"apply_patch": {Name: "apply_patch", Custom: true}},
			body: `{"id":"m","type":"message","content":[{"type":"tool_use","id":"toolu_2","name":"apply_patch",` +
				`"input":{"input":"*** Begin Patch\n"}},{"type":"tool_use","id":"toolu_3","name":"f","input":{"a":1}}],"stop_reason":"tool_use"}`,
			want: answerView{Calls: []callView{{ID: "toolu_2", Name: "apply_patch", Input: "*** Begin Patch\n", Custom: true},
				{ID: "toolu_3", Name: "f", Args: `{"a":1}`}}, Stop: "tool_calls"}},
		{name: "custom tool back to chat from responses", from: Chat, to: Responses,
			tools: map[string]Tool{"apply_patch": {Name: "apply_patch", Custom: true}},
			body:  `{"id":"r","status":"completed","output":[{"type":"function_call","call_id":"c1","name":"apply_patch","arguments":"{\"input\":\"x\"}"}]}`,
			want:  answerView{Calls: []callView{{ID: "c1", Name: "apply_patch", Input: "x", Custom: true}}, Stop: "tool_calls"}},
		{name: "call id too long for chat", from: Chat, to: Responses,
			body: `{"id":"r","status":"completed","output":[{"type":"function_call","call_id":"` + strings.Repeat("d", 50) + `","name":"f","arguments":"{}"}]}`,
			want: answerView{Calls: []callView{{ID: strings.Repeat("d", 31) + "_" + sha8(strings.Repeat("d", 50)), Name: "f", Args: `{}`}}, Stop: "tool_calls"}},
	})
}

// TestResponseShape checks what the SDKs do not show: chat content is
// null when the answer is only tool calls, refusal and logprobs null, the
// Messages stop_sequence null unless a sequence matched.
func TestResponseShape(t *testing.T) {
	tests := []struct {
		name     string
		from, to API
		body     string
		want     []string
	}{
		{name: "chat only tool calls", from: Chat, to: Messages,
			body: `{"id":"m","type":"message","content":[{"type":"tool_use","id":"t","name":"f","input":{}}],"stop_reason":"tool_use"}`,
			want: []string{`"content":null`, `"refusal":null`, `"logprobs":null`, `"arguments":"{}"`}},
		{name: "chat empty answer", from: Chat, to: Messages,
			body: `{"id":"m","type":"message","content":[],"stop_reason":"end_turn"}`,
			want: []string{`"content":""`, `"finish_reason":"stop"`}},
		{name: "messages no whitespace-only text block", from: Messages, to: Chat,
			body: `{"id":"c","choices":[{"message":{"content":"\n\n","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
			want: []string{`"content":[{"type":"tool_use"`}},
		{name: "messages stop_sequence null", from: Messages, to: Chat,
			body: `{"id":"c","choices":[{"message":{"content":"x"},"finish_reason":"stop"}]}`,
			want: []string{`"stop_sequence":null`, `"content":[{"type":"text","text":"x"}]`}},
		{name: "responses incomplete details", from: Responses, to: Chat,
			body: `{"id":"c","choices":[{"message":{"content":"x"},"finish_reason":"length"}]}`,
			want: []string{`"incomplete_details":{"reason":"max_output_tokens"}`, `"annotations":[]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &Translation{From: tt.from, To: Target{API: tt.to, Model: "served"}}
			out, err := tr.Response([]byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("%s lacks %s", out, w)
				}
			}
		})
	}
}

func ExampleTranslation_Response() {
	tr := &Translation{From: Messages, To: Target{API: Chat, Model: "gpt-5"}}
	out, err := tr.Response([]byte(`{"id":"chatcmpl-7","object":"chat.completion","choices":[{"index":0,
		"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",
		"function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}],
		"usage":{"prompt_tokens":120,"completion_tokens":9,"total_tokens":129,"prompt_tokens_details":{"cached_tokens":100}}}`))
	fmt.Println(string(out), err)
	// Output:
	// {"id":"msg_chatcmpl-7","type":"message","role":"assistant","model":"gpt-5","content":[{"type":"tool_use","id":"call_1","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":9,"cache_read_input_tokens":100,"cache_creation_input_tokens":0}} <nil>
}
