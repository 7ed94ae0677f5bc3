package wire

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// responsesCallStream is a Responses upstream stream of one tool call
// whose arguments arrive as the events say (after output_item.added),
// then response.completed.
func responsesCallStream(item obj, events func(ev eventFunc) []string) []string {
	ev := sequencedEvents()
	resp := obj{"id": "resp_up", "object": "response", "status": "in_progress", "model": "gpt-up", "output": []obj{}}
	out := []string{ev("response.created", obj{"response": resp}),
		ev("response.output_item.added", obj{"output_index": 0, "item": item})}
	out = append(out, events(ev)...)
	done := obj{"id": "resp_up", "object": "response", "status": "completed", "model": "gpt-up", "output": []obj{},
		"usage": obj{"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}}
	return append(out, ev("response.completed", obj{"response": done}))
}

// The call of the argument streams: a function call's arguments, a
// custom call's raw input and the arguments a client gets for it.
const (
	streamArgs       = `{"city":"Paris","n":[1,2]}`
	streamInput      = "*** Begin Patch\n\"quoted\" \\ é"
	streamInputAsArg = `{"input":"*** Begin Patch\n\"quoted\" \\ é"}`
)

var (
	functionItem = obj{"id": "fc_1", "type": "function_call", "call_id": "call_1", "name": "get", "arguments": ""}
	customItem   = obj{"id": "ctc_1", "type": "custom_tool_call", "call_id": "call_1", "name": "get", "input": ""}
)

// withField is item with key set to value.
func withField(item obj, key, value string) obj {
	out := obj{key: value}
	for k, v := range item {
		if k != key {
			out[k] = v
		}
	}
	return out
}

type eventFunc = func(typ string, fields obj) string

// argumentStreams are the ways a Responses upstream sends one call's
// arguments after its output_item.added, and what a client must get.
var argumentStreams = []struct {
	name   string
	item   obj
	events func(ev eventFunc) []string
	want   string
}{
	{name: "arguments only in output_item.done", item: functionItem, want: streamArgs, events: func(ev eventFunc) []string {
		return []string{ev("response.output_item.done", obj{"output_index": 0, "item": withField(functionItem, "arguments", streamArgs)})}
	}},
	{name: "arguments only in function_call_arguments.done", item: functionItem, want: streamArgs, events: func(ev eventFunc) []string {
		return []string{ev("response.function_call_arguments.done", obj{"output_index": 0, "item_id": "fc_1", "arguments": streamArgs}),
			ev("response.output_item.done", obj{"output_index": 0, "item": withField(functionItem, "arguments", streamArgs)})}
	}},
	{name: "deltas then both .done events, once", item: functionItem, want: streamArgs, events: func(ev eventFunc) []string {
		return []string{ev("response.function_call_arguments.delta", obj{"output_index": 0, "item_id": "fc_1", "delta": streamArgs[:7]}),
			ev("response.function_call_arguments.delta", obj{"output_index": 0, "item_id": "fc_1", "delta": streamArgs[7:]}),
			ev("response.function_call_arguments.done", obj{"output_index": 0, "item_id": "fc_1", "arguments": streamArgs}),
			ev("response.output_item.done", obj{"output_index": 0, "item": withField(functionItem, "arguments", streamArgs)})}
	}},
	{name: "custom input only in output_item.done", item: customItem, want: streamInputAsArg, events: func(ev eventFunc) []string {
		return []string{ev("response.output_item.done", obj{"output_index": 0, "item": withField(customItem, "input", streamInput)})}
	}},
	{name: "custom input only in custom_tool_call_input.done", item: customItem, want: streamInputAsArg, events: func(ev eventFunc) []string {
		return []string{ev("response.custom_tool_call_input.done", obj{"output_index": 0, "item_id": "ctc_1", "input": streamInput}),
			ev("response.output_item.done", obj{"output_index": 0, "item": withField(customItem, "input", streamInput)})}
	}},
	{name: "custom input in deltas then .done events, once", item: customItem, want: streamInputAsArg, events: func(ev eventFunc) []string {
		return []string{ev("response.custom_tool_call_input.delta", obj{"output_index": 0, "item_id": "ctc_1", "delta": streamInput[:9]}),
			ev("response.custom_tool_call_input.delta", obj{"output_index": 0, "item_id": "ctc_1", "delta": streamInput[9:]}),
			ev("response.custom_tool_call_input.done", obj{"output_index": 0, "item_id": "ctc_1", "input": streamInput}),
			ev("response.output_item.done", obj{"output_index": 0, "item": withField(customItem, "input", streamInput)})}
	}},
	{name: "custom input in deltas without .done events", item: customItem, want: streamInputAsArg, events: func(ev eventFunc) []string {
		return []string{ev("response.custom_tool_call_input.delta", obj{"output_index": 0, "item_id": "ctc_1", "delta": streamInput[:9]}),
			ev("response.custom_tool_call_input.delta", obj{"output_index": 0, "item_id": "ctc_1", "delta": streamInput[9:]})}
	}},
	{name: "empty custom input", item: customItem, want: `{"input":""}`, events: func(ev eventFunc) []string {
		return []string{ev("response.output_item.done", obj{"output_index": 0, "item": customItem})}
	}},
}

// TestTranscoderArgumentsWithoutDeltas: a Responses upstream that sends a
// call's arguments (a custom call's input) only in its .done events, or in
// deltas and again in them, reaches chat and Messages clients with the
// whole arguments, once (GATEWAY §8.5: no argument is ever dropped). A
// custom call's input reaches them as {"input": ...}, as a whole answer's
// does.
func TestTranscoderArgumentsWithoutDeltas(t *testing.T) {
	for _, row := range argumentStreams {
		for _, client := range []API{Chat, Messages} {
			t.Run(row.name+"/"+client.String(), func(t *testing.T) {
				out := translateStream(t, testTranslation(client, Responses), responsesCallStream(row.item, row.events))
				got := decodeClient(t, client, out)
				if !got.ended || len(got.calls) != 1 {
					t.Fatalf("ended %v, calls %+v; want one call\n%s", got.ended, got.calls, out)
				}
				if c := got.calls[0]; c.id != "call_1" || c.name != "get" || !jsonEqual(c.args[0], row.want) {
					t.Errorf("call = %+v, want arguments %s\n%s", c, row.want, out)
				}
			})
		}
	}
}

// chatStreamCall is a custom tool call a chat client assembled.
type chatStreamCall struct {
	id, typ, name, input string
}

// decodeChatCustomCalls assembles a chat client's stream: openai-go's
// accumulator gives each call's id and type; a custom call's name and
// input fragments (custom.name, custom.input), which its chunk type does
// not model, are read from each decoded chunk's extra field.
func decodeChatCustomCalls(t *testing.T, out []byte) (calls []chatStreamCall, ended bool) {
	t.Helper()
	var acc openai.ChatCompletionAccumulator
	custom := map[int64]*chatStreamCall{}
	for _, data := range clientEvents(t, out) {
		if data == "[DONE]" {
			ended = true
			continue
		}
		var chunk openai.ChatCompletionChunk
		if err := json.Unmarshal([]byte(data), &chunk); err != nil || !acc.AddChunk(chunk) {
			t.Fatalf("chat chunk %s: %v", data, err)
		}
		for _, choice := range chunk.Choices {
			for _, tc := range choice.Delta.ToolCalls {
				field, ok := tc.JSON.ExtraFields["custom"]
				if !ok {
					continue
				}
				var c struct{ Name, Input string }
				if err := json.Unmarshal([]byte(field.Raw()), &c); err != nil {
					t.Fatalf("custom %s: %v", field.Raw(), err)
				}
				if custom[tc.Index] == nil {
					custom[tc.Index] = &chatStreamCall{}
				}
				custom[tc.Index].name += c.Name
				custom[tc.Index].input += c.Input
			}
		}
	}
	for i, call := range acc.Choices[0].Message.ToolCalls {
		c := chatStreamCall{id: call.ID, typ: call.Type, name: call.Function.Name, input: call.Function.Arguments}
		if got := custom[int64(i)]; got != nil {
			c.name, c.input = got.name, got.input
		}
		calls = append(calls, c)
	}
	return calls, ended
}

// TestTranscoderChatCustomCalls: a chat client's custom tool, served by a
// Messages or Responses upstream as a function tool, is called back as a
// custom tool call (type custom, custom.name, custom.input: the raw
// input); its function tools stay function calls.
func TestTranscoderChatCustomCalls(t *testing.T) {
	long := strings.Repeat("p", 70)
	tools := map[string]Tool{"apply_patch": {Name: "apply_patch", Custom: true}, toolName(long, Chat): {Name: long, Custom: true}}
	sc := streamScenario{text: []string{"Patching."}, tools: []scenarioTool{
		{id: "call_1", name: "apply_patch", args: []string{`{"input":"*** Begin`, ` Patch\n\"x\""}`}},
		{id: "call_2", name: "get", args: []string{`{"a":1}`}},
		{id: "call_3", name: toolName(long, Chat), args: []string{`{"input":""}`}},
	}, prompt: 4, output: 2}
	want := []chatStreamCall{{id: "call_1", typ: "custom", name: "apply_patch", input: "*** Begin Patch\n\"x\""},
		{id: "call_2", typ: "function", name: "get", input: `{"a":1}`}, {id: "call_3", typ: "custom", name: long}}
	for _, upstream := range []API{Messages, Responses} {
		t.Run(upstream.String(), func(t *testing.T) {
			tr := testTranslation(Chat, upstream)
			tr.tools = tools
			out := translateStream(t, tr, upstreamStream(upstream, sc))
			got, ended := decodeChatCustomCalls(t, out)
			if !ended || !slices.Equal(got, want) {
				t.Errorf("calls %+v (ended %v), want %+v\n%s", got, ended, want, out)
			}
		})
	}
}
