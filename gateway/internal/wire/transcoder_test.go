package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// streamResult is what a client's official SDK assembled from the stream.
type streamResult struct {
	text   string
	calls  []scenarioTool // args: one element, the whole arguments
	stop   string         // the client wire's stop reason or status
	prompt int
	cached int
	output int
	ended  bool // the client's end marker arrived
}

// translateStream runs events through a Transcoder, checking Committed
// turns true exactly when the first content event is emitted.
func translateStream(t *testing.T, tr *Translation, events []string) []byte {
	t.Helper()
	s := tr.Stream()
	var out []byte
	for _, ev := range events {
		before := len(out)
		wasCommitted := s.Committed()
		var err error
		out, err = s.Event(out, []byte(ev))
		if err != nil {
			t.Fatalf("Event(%q): %v", ev, err)
		}
		if !wasCommitted && s.Committed() != hasClientContent(out[before:]) {
			t.Fatalf("Committed() = %v after %q emitted %q", s.Committed(), ev, out[before:])
		}
	}
	return out
}

// hasClientContent reports whether client events carry content.
func hasClientContent(out []byte) bool {
	for _, marker := range []string{`"content_block_delta"`, `"tool_use"`, `.delta"`, `"function_call"`,
		`"tool_calls":[`, `{"content":`, `"custom_tool_call"`} {
		if bytes.Contains(out, []byte(marker)) {
			return true
		}
	}
	return false
}

// crossPairs are the six (upstream wire, client wire) pairs.
var crossPairs = []struct{ from, to API }{
	{Messages, Chat}, {Messages, Responses}, {Chat, Messages},
	{Chat, Responses}, {Responses, Messages}, {Responses, Chat},
}

func testTranslation(from, to API) *Translation {
	return &Translation{From: from, To: Target{API: to, Model: "served-model"}, streamUsage: true, estimate: 77}
}

// wantStop is the client's stop reason for an answer with or without tool
// calls.
func wantStop(client API, tools bool) string {
	switch client {
	case Messages:
		return map[bool]string{true: "tool_use", false: "end_turn"}[tools]
	case Chat:
		return map[bool]string{true: "tool_calls", false: "stop"}[tools]
	}
	return "completed"
}

// TestTranscoderPairs feeds each upstream wire's stream of each scenario
// and decodes the client stream with the client wire's official SDK.
func TestTranscoderPairs(t *testing.T) {
	scenarios := []struct {
		name string
		sc   streamScenario
	}{
		{name: "text then tool call", sc: weatherScenario},
		{name: "text only", sc: streamScenario{text: []string{"Just ", "text. ", "日本語"}, prompt: 12, cached: 0, output: 5}},
		{name: "tool only", sc: streamScenario{tools: weatherScenario.tools, prompt: 30, cached: 10, output: 9}},
		{name: "two parallel tool calls", sc: streamScenario{text: []string{"Checking."}, tools: []scenarioTool{
			{id: "call_1", name: "get_weather", args: []string{`{"city":`, `"Paris"}`}},
			{id: "call_2", name: "get_time", args: []string{`{"tz":"Europe/Paris"}`}},
		}, prompt: 50, cached: 20, output: 15}},
		{name: "tool without arguments", sc: streamScenario{tools: []scenarioTool{{id: "call_0", name: "now"}}, prompt: 3, output: 2}},
	}
	for _, pair := range crossPairs {
		for _, row := range scenarios {
			t.Run(fmt.Sprintf("%s->%s/%s", pair.from, pair.to, row.name), func(t *testing.T) {
				out := translateStream(t, testTranslation(pair.from, pair.to), upstreamStream(pair.to, row.sc))
				got := decodeClient(t, pair.from, out)
				checkResult(t, got, row.sc, wantStop(pair.from, len(row.sc.tools) > 0))
			})
		}
	}
}

// checkResult compares what the client assembled with the scenario.
func checkResult(t *testing.T, got streamResult, sc streamScenario, stop string) {
	t.Helper()
	if !got.ended {
		t.Error("the client's end marker is missing")
	}
	if want := strings.Join(sc.text, ""); got.text != want {
		t.Errorf("text = %q, want %q", got.text, want)
	}
	if len(got.calls) != len(sc.tools) {
		t.Fatalf("tool calls = %+v, want %d", got.calls, len(sc.tools))
	}
	for i, want := range sc.tools {
		args := strings.Join(want.args, "")
		if args == "" {
			args = "{}"
		}
		call := got.calls[i]
		if call.id != want.id || call.name != want.name || !jsonEqual(call.args[0], args) {
			t.Errorf("call %d = %+v, want id %s name %s arguments %s", i, call, want.id, want.name, args)
		}
	}
	if got.stop != stop {
		t.Errorf("stop = %q, want %q", got.stop, stop)
	}
	if got.prompt != sc.prompt || got.cached != sc.cached || got.output != sc.output {
		t.Errorf("usage prompt/cached/output = %d/%d/%d, want %d/%d/%d",
			got.prompt, got.cached, got.output, sc.prompt, sc.cached, sc.output)
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// endMarkers are the client wires' end markers.
var endMarkers = []string{"message_stop", "[DONE]", "response.completed", "response.incomplete", "message_delta", `"finish_reason":"`}

// TestTranscoderNoEndMarker: a stream cut before the upstream's end marker
// never gets the client's, nor a stop reason.
func TestTranscoderNoEndMarker(t *testing.T) {
	for _, pair := range crossPairs {
		t.Run(fmt.Sprintf("%s->%s", pair.from, pair.to), func(t *testing.T) {
			events := upstreamStream(pair.to, weatherScenario)
			cut := len(events) - 1
			if pair.to != Responses {
				cut = len(events) - 2 // before the finish too (chat: the usage chunk, Messages: message_delta)
			}
			out := translateStream(t, testTranslation(pair.from, pair.to), events[:cut])
			for _, marker := range endMarkers {
				if bytes.Contains(out, []byte(marker)) {
					t.Errorf("output has %s without the upstream's end marker:\n%s", marker, out)
				}
			}
			clientEvents(t, out)
		})
	}
}

// TestTranscoderErrorEvents: an upstream error event produces nothing.
func TestTranscoderErrorEvents(t *testing.T) {
	rows := []struct {
		name     string
		upstream API
		event    string
	}{
		{name: "chat error chunk", upstream: Chat, event: `data: {"error":{"message":"overloaded","type":"server_error"}}` + "\n\n"},
		{name: "messages error", upstream: Messages, event: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"},
		{name: "responses error", upstream: Responses, event: `data: {"type":"error","code":"server_error","message":"boom","sequence_number":3}` + "\n\n"},
		{name: "responses failed", upstream: Responses, event: `data: {"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"server_error","message":"x"}}}` + "\n\n"},
		{name: "comment", upstream: Chat, event: ": ping\n\n"},
	}
	for _, row := range rows {
		for _, client := range []API{Chat, Responses, Messages} {
			if client == row.upstream {
				continue
			}
			t.Run(row.name+"/"+client.String(), func(t *testing.T) {
				s := testTranslation(client, row.upstream).Stream()
				out, err := s.Event([]byte("prefix"), []byte(row.event))
				if err != nil || string(out) != "prefix" || s.Committed() {
					t.Errorf("Event = %q, %v (committed %v), want dst unchanged and nil", out, err, s.Committed())
				}
			})
		}
	}
}

// TestTranscoderMalformed: an event whose data is not JSON is an error.
func TestTranscoderMalformed(t *testing.T) {
	for _, pair := range crossPairs {
		s := testTranslation(pair.from, pair.to).Stream()
		if _, err := s.Event(nil, []byte("data: {not json\n\n")); !errors.Is(err, ErrMalformedEvent) {
			t.Errorf("%s->%s: err = %v, want ErrMalformedEvent", pair.from, pair.to, err)
		}
	}
}

// TestTranscoderStopSequence: on a Responses upstream the text is cut at
// the first stop sequence, even one split across deltas.
func TestTranscoderStopSequence(t *testing.T) {
	rows := []struct {
		name   string
		client API
		text   []string
		stops  []string
		want   string
		stop   string
	}{
		{name: "split across deltas", client: Messages, text: []string{"abc E", "ND tail", " more"}, stops: []string{"END"}, want: "abc ", stop: "stop_sequence"},
		{name: "earliest of two", client: Messages, text: []string{"one\n", "\ntwo STOP"}, stops: []string{"STOP", "\n\n"}, want: "one", stop: "stop_sequence"},
		{name: "no match keeps all", client: Messages, text: []string{"abc E", "N", "D"}, stops: []string{"ENDX"}, want: "abc END", stop: "end_turn"},
		{name: "multibyte held back", client: Chat, text: []string{"日本", "語です"}, stops: []string{"です"}, want: "日本語", stop: "stop"},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			tr := testTranslation(row.client, Responses)
			tr.stops = row.stops
			sc := streamScenario{text: row.text, prompt: 5, output: 3}
			got := decodeClient(t, row.client, translateStream(t, tr, upstreamStream(Responses, sc)))
			if got.text != row.want || got.stop != row.stop || !got.ended {
				t.Errorf("text %q stop %q ended %v, want %q %q", got.text, got.stop, got.ended, row.want, row.stop)
			}
		})
	}
}

// TestTranscoderStopReasons maps the upstream's non-tool stop reasons.
func TestTranscoderStopReasons(t *testing.T) {
	rows := []struct {
		name            string
		upstream, event string
		client          API
		want            string
	}{
		{name: "chat length", upstream: "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n", client: Messages, want: `"stop_reason":"max_tokens"`},
		{name: "chat content_filter", upstream: "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\ndata: [DONE]\n\n", client: Responses, want: `"incomplete_details":{"reason":"content_filter"}`},
		{name: "messages max_tokens", upstream: "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"},\"usage\":{\"output_tokens\":9}}\n\ndata: {\"type\":\"message_stop\"}\n\n", client: Responses, want: `event: response.incomplete`},
		{name: "messages refusal", upstream: "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"},\"usage\":{\"output_tokens\":9}}\n\ndata: {\"type\":\"message_stop\"}\n\n", client: Chat, want: `"finish_reason":"content_filter"`},
		{name: "messages end_turn with a tool call", upstream: "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
			"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"f\",\"input\":{}}}\n\n" +
			"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9}}\n\ndata: {\"type\":\"message_stop\"}\n\n",
			client: Chat, want: `"finish_reason":"tool_calls"`},
		{name: "messages tool_use without a tool call", upstream: "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"usage\":{\"input_tokens\":3}}}\n\n" +
			"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
			"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\ndata: {\"type\":\"message_stop\"}\n\n",
			client: Chat, want: `"finish_reason":"stop"`},
		{name: "responses incomplete", upstream: "data: {\"type\":\"response.incomplete\",\"response\":{\"status\":\"incomplete\",\"incomplete_details\":{\"reason\":\"max_output_tokens\"}}}\n\n", client: Chat, want: `"finish_reason":"length"`},
	}
	wires := map[string]API{"data: {\"choices": Chat, "data: {\"type\":\"message": Messages, "data: {\"type\":\"response": Responses}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			upstream := Chat
			for prefix, api := range wires {
				if strings.HasPrefix(row.upstream, prefix) {
					upstream = api
				}
			}
			events := strings.SplitAfter(row.upstream, "\n\n")
			out := translateStream(t, testTranslation(row.client, upstream), events)
			if !strings.Contains(string(out), row.want) {
				t.Errorf("output lacks %s:\n%s", row.want, out)
			}
			clientEvents(t, out)
		})
	}
}

// TestTranscoderClientTools maps tool names and call ids back to the
// client's: a hashed name, a namespace tool, a custom tool, an id the
// client's wire refuses.
func TestTranscoderClientTools(t *testing.T) {
	long := strings.Repeat("n", 70)
	tools := map[string]Tool{
		"hashed_0123abcd": {Name: long},
		"ns__spawn":       {Name: "spawn", Namespace: "ns"},
		"apply_patch":     {Name: "apply_patch", Custom: true},
	}
	rows := []struct {
		name     string
		client   API
		upstream API
		call     scenarioTool
		want     []string // substrings of the client stream
	}{
		{name: "hashed name to chat", client: Chat, upstream: Messages, call: scenarioTool{id: "toolu_1", name: "hashed_0123abcd", args: []string{`{}`}},
			want: []string{`"name":"` + long + `"`}},
		{name: "namespace to responses", client: Responses, upstream: Chat, call: scenarioTool{id: "call_1", name: "ns__spawn", args: []string{`{"a":1}`}},
			want: []string{`"name":"spawn","namespace":"ns"`, `"arguments":"{\"a\":1}"`}},
		{name: "custom to responses", client: Responses, upstream: Messages, call: scenarioTool{id: "toolu_2", name: "apply_patch", args: []string{`{"input":"*** Begin`, ` Patch"}`}},
			want: []string{`"type":"custom_tool_call"`, `response.custom_tool_call_input.delta`, `"input":"*** Begin Patch"`}},
		{name: "id refused by messages", client: Messages, upstream: Chat, call: scenarioTool{id: "call:1/x", name: "f", args: []string{`{}`}},
			want: []string{`"id":"` + mapID("call:1/x", Messages) + `"`}},
		{name: "id too long for chat", client: Chat, upstream: Responses, call: scenarioTool{id: strings.Repeat("d", 50), name: "f", args: []string{`{}`}},
			want: []string{`"id":"` + strings.Repeat("d", 31) + "_" + sha8(strings.Repeat("d", 50)) + `"`}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			tr := testTranslation(row.client, row.upstream)
			tr.tools = tools
			sc := streamScenario{tools: []scenarioTool{row.call}, prompt: 4, output: 2}
			out := translateStream(t, tr, upstreamStream(row.upstream, sc))
			for _, want := range row.want {
				if !bytes.Contains(out, []byte(want)) {
					t.Errorf("output lacks %s:\n%s", want, out)
				}
			}
			clientEvents(t, out)
		})
	}
}

// TestTranscoderCommitted: nothing before the first content commits; a
// Messages client's message_start estimates the input tokens.
func TestTranscoderCommitted(t *testing.T) {
	for _, pair := range crossPairs {
		t.Run(fmt.Sprintf("%s->%s", pair.from, pair.to), func(t *testing.T) {
			s := testTranslation(pair.from, pair.to).Stream()
			events := upstreamStream(pair.to, weatherScenario)
			var out []byte
			for i, ev := range events {
				var err error
				if out, err = s.Event(out, []byte(ev)); err != nil {
					t.Fatal(err)
				}
				content := strings.Contains(ev, `"Hello, "`)
				if content != s.Committed() && (i == 0 || !s.Committed()) {
					t.Fatalf("after event %d %q: Committed() = %v", i, ev, s.Committed())
				}
				if content {
					break
				}
			}
			if pair.from == Messages && !bytes.Contains(out, []byte(`"input_tokens":77`)) {
				t.Errorf("message_start does not carry the estimate:\n%s", out)
			}
			prefix := map[API]string{Chat: "chatcmpl-", Messages: "msg_", Responses: MintedResponsePrefix}[pair.from]
			if !strings.HasPrefix(s.ResponseID(), prefix) || !bytes.Contains(out, []byte(s.ResponseID())) {
				t.Errorf("ResponseID() = %q, want %s… as in the stream", s.ResponseID(), prefix)
			}
		})
	}
}

// TestTranscoderChatUsageChunk: a chat client gets a usage chunk only when
// it asked for one.
func TestTranscoderChatUsageChunk(t *testing.T) {
	for _, upstream := range []API{Messages, Responses} {
		for _, asked := range []bool{false, true} {
			tr := testTranslation(Chat, upstream)
			tr.streamUsage = asked
			out := translateStream(t, tr, upstreamStream(upstream, weatherScenario))
			if got := bytes.Contains(out, []byte(`"choices":[],"usage":`)); got != asked {
				t.Errorf("%s upstream, usage asked %v: usage chunk %v", upstream, asked, got)
			}
			if !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) {
				t.Errorf("%s upstream: the stream does not end with [DONE]", upstream)
			}
		}
	}
}

// A chat stream served to a Messages client: each upstream event becomes
// zero or more client events as it arrives.
func ExampleTranslation_Stream() {
	t := &Translation{From: Messages, To: Target{API: Chat, Model: "gpt-4.1"}}
	s := t.Stream()
	upstream := []string{
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n",
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
		"data: [DONE]\n\n",
	}
	for _, ev := range upstream {
		out, _ := s.Event(nil, []byte(ev))
		var names []string
		for _, line := range strings.Split(string(out), "\n") {
			if name, ok := strings.CutPrefix(line, "event: "); ok {
				names = append(names, name)
			}
		}
		fmt.Println(s.Committed(), names)
	}
	// Output:
	// false [message_start]
	// true [content_block_start content_block_delta]
	// true []
	// true [content_block_stop message_delta message_stop]
}
