package wire

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// Upstream streams for the transcoder's tests and fuzz seeds (one answer,
// a scenario, rendered as each wire streams it), and the oracles: each
// client wire's official SDK assembling what the transcoder emitted.

// streamScenario is an answer an upstream streams: text fragments, then
// tool calls with their arguments in fragments, then its usage (OpenAI
// terms: prompt includes cached).
type streamScenario struct {
	text   []string
	tools  []scenarioTool
	prompt int
	cached int
	output int
}

type scenarioTool struct {
	id   string
	name string
	args []string
}

var weatherScenario = streamScenario{
	text: []string{"Hello, ", "wor", "ld \"quoted\"\n"},
	tools: []scenarioTool{{id: "call_abc", name: "get_weather",
		args: []string{`{"ci`, `ty":"Pa`, `ris","unit":"c"}`}}},
	prompt: 100, cached: 40, output: 20,
}

// upstreamStream renders a scenario as the events of wire api.
func upstreamStream(api API, sc streamScenario) []string {
	switch api {
	case Chat:
		return chatUpstream(sc)
	case Messages:
		return messagesUpstream(sc)
	}
	return responsesUpstream(sc)
}

func dataEvent(v any) string {
	b, _ := json.Marshal(v)
	return "data: " + string(b) + "\n\n"
}

func namedEvent(name string, v any) string {
	b, _ := json.Marshal(v)
	return "event: " + name + "\ndata: " + string(b) + "\n\n"
}

type obj = map[string]any

func chatUpstream(sc streamScenario) []string {
	chunk := func(delta obj, finish any) string {
		return dataEvent(obj{"id": "chatcmpl-up", "object": "chat.completion.chunk", "created": 1, "model": "gpt-up",
			"choices": []obj{{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	evs := []string{chunk(obj{"role": "assistant", "content": ""}, nil)}
	for _, t := range sc.text {
		evs = append(evs, chunk(obj{"content": t}, nil))
	}
	for i, tool := range sc.tools {
		evs = append(evs, chunk(obj{"tool_calls": []obj{{"index": i, "id": tool.id, "type": "function",
			"function": obj{"name": tool.name, "arguments": ""}}}}, nil))
		for _, a := range tool.args {
			evs = append(evs, chunk(obj{"tool_calls": []obj{{"index": i, "function": obj{"arguments": a}}}}, nil))
		}
	}
	finish := "stop"
	if len(sc.tools) > 0 {
		finish = "tool_calls"
	}
	evs = append(evs, chunk(obj{}, finish), ": keep-alive\n\n")
	evs = append(evs, dataEvent(obj{"id": "chatcmpl-up", "object": "chat.completion.chunk", "created": 1, "model": "gpt-up",
		"choices": []obj{}, "usage": obj{"prompt_tokens": sc.prompt, "completion_tokens": sc.output,
			"total_tokens": sc.prompt + sc.output, "prompt_tokens_details": obj{"cached_tokens": sc.cached}}}))
	return append(evs, "data: [DONE]\n\n")
}

func messagesUpstream(sc streamScenario) []string {
	evs := []string{namedEvent("message_start", obj{"type": "message_start", "message": obj{
		"id": "msg_up", "type": "message", "role": "assistant", "model": "claude-up", "content": []obj{},
		"usage": obj{"input_tokens": sc.prompt - sc.cached, "cache_read_input_tokens": sc.cached, "output_tokens": 1}}}),
		namedEvent("ping", obj{"type": "ping"})}
	index := 0
	block := func(start obj, deltas []obj) {
		evs = append(evs, namedEvent("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": start}))
		for _, d := range deltas {
			evs = append(evs, namedEvent("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": d}))
		}
		evs = append(evs, namedEvent("content_block_stop", obj{"type": "content_block_stop", "index": index}))
		index++
	}
	block(obj{"type": "thinking", "thinking": ""}, []obj{{"type": "thinking_delta", "thinking": "hmm"}, {"type": "signature_delta", "signature": "sig"}})
	if len(sc.text) > 0 {
		var deltas []obj
		for _, t := range sc.text {
			deltas = append(deltas, obj{"type": "text_delta", "text": t})
		}
		block(obj{"type": "text", "text": ""}, deltas)
	}
	for _, tool := range sc.tools {
		var deltas []obj
		for _, a := range tool.args {
			deltas = append(deltas, obj{"type": "input_json_delta", "partial_json": a})
		}
		block(obj{"type": "tool_use", "id": tool.id, "name": tool.name, "input": obj{}}, deltas)
	}
	stop := "end_turn"
	if len(sc.tools) > 0 {
		stop = "tool_use"
	}
	evs = append(evs, namedEvent("message_delta", obj{"type": "message_delta",
		"delta": obj{"stop_reason": stop, "stop_sequence": nil}, "usage": obj{"output_tokens": sc.output}}))
	return append(evs, namedEvent("message_stop", obj{"type": "message_stop"}))
}

// sequencedEvents returns a writer of Responses stream events, each with
// its type and the next sequence_number.
func sequencedEvents() func(typ string, fields obj) string {
	seq := 0
	return func(typ string, fields obj) string {
		fields["type"], fields["sequence_number"] = typ, seq
		seq++
		return namedEvent(typ, fields)
	}
}

func responsesUpstream(sc streamScenario) []string {
	ev := sequencedEvents()
	resp := obj{"id": "resp_up", "object": "response", "status": "in_progress", "model": "gpt-up", "output": []obj{}}
	evs := []string{ev("response.created", obj{"response": resp}), ev("response.in_progress", obj{"response": resp})}
	index := 0
	evs = append(evs, ev("response.output_item.added", obj{"output_index": index, "item": obj{"id": "rs_1", "type": "reasoning", "summary": []obj{}}}),
		ev("response.reasoning_summary_text.delta", obj{"output_index": index, "item_id": "rs_1", "delta": "hmm"}),
		ev("response.output_item.done", obj{"output_index": index, "item": obj{"id": "rs_1", "type": "reasoning", "summary": []obj{}}}))
	index++
	if len(sc.text) > 0 {
		item := obj{"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []obj{}}
		evs = append(evs, ev("response.output_item.added", obj{"output_index": index, "item": item}),
			ev("response.content_part.added", obj{"output_index": index, "item_id": "msg_1", "content_index": 0, "part": obj{"type": "output_text", "text": ""}}))
		for _, t := range sc.text {
			evs = append(evs, ev("response.output_text.delta", obj{"output_index": index, "item_id": "msg_1", "content_index": 0, "delta": t}))
		}
		evs = append(evs, ev("response.output_text.done", obj{"output_index": index, "item_id": "msg_1", "content_index": 0, "text": strings.Join(sc.text, "")}),
			ev("response.output_item.done", obj{"output_index": index, "item": item}))
		index++
	}
	for i, tool := range sc.tools {
		id := fmt.Sprintf("fc_%d", i)
		item := obj{"id": id, "type": "function_call", "call_id": tool.id, "name": tool.name, "arguments": ""}
		evs = append(evs, ev("response.output_item.added", obj{"output_index": index, "item": item}))
		for _, a := range tool.args {
			evs = append(evs, ev("response.function_call_arguments.delta", obj{"output_index": index, "item_id": id, "delta": a}))
		}
		evs = append(evs, ev("response.function_call_arguments.done", obj{"output_index": index, "item_id": id, "arguments": strings.Join(tool.args, "")}),
			ev("response.output_item.done", obj{"output_index": index, "item": item}))
		index++
	}
	resp = obj{"id": "resp_up", "object": "response", "status": "completed", "model": "gpt-up", "output": []obj{},
		"usage": obj{"input_tokens": sc.prompt, "input_tokens_details": obj{"cached_tokens": sc.cached},
			"output_tokens": sc.output, "total_tokens": sc.prompt + sc.output}}
	return append(evs, ev("response.completed", obj{"response": resp}))
}

// clientEvents splits a client stream into its events' data.
func clientEvents(t *testing.T, out []byte) []string {
	t.Helper()
	var datas []string
	for _, ev := range strings.SplitAfter(string(out), "\n\n") {
		if ev == "" {
			continue
		}
		if !strings.HasSuffix(ev, "\n\n") {
			t.Fatalf("event not terminated by a blank line: %q", ev)
		}
		e := parseSSE([]byte(ev))
		if e.data == nil {
			t.Fatalf("event without data: %q", ev)
		}
		if string(e.data) != "[DONE]" && !json.Valid(e.data) {
			t.Fatalf("invalid JSON: %s", e.data)
		}
		datas = append(datas, string(e.data))
	}
	return datas
}

// decodeClient assembles a client stream with the official SDK of wire api.
func decodeClient(t *testing.T, api API, out []byte) streamResult {
	t.Helper()
	switch api {
	case Messages:
		return decodeMessagesClient(t, out)
	case Chat:
		return decodeChatClient(t, out)
	}
	return decodeResponsesClient(t, out)
}

func decodeMessagesClient(t *testing.T, out []byte) streamResult {
	t.Helper()
	var msg anthropic.Message
	var r streamResult
	for _, data := range clientEvents(t, out) {
		var ev anthropic.MessageStreamEventUnion
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("anthropic event %s: %v", data, err)
		}
		if err := msg.Accumulate(ev); err != nil {
			t.Fatalf("Accumulate(%s): %v", data, err)
		}
		r.ended = r.ended || ev.Type == "message_stop"
	}
	for _, block := range msg.Content {
		switch block.Type {
		case "text":
			r.text += block.Text
		case "tool_use":
			r.calls = append(r.calls, scenarioTool{id: block.ID, name: block.Name, args: []string{string(block.Input)}})
		}
	}
	r.stop = string(msg.StopReason)
	r.cached = int(msg.Usage.CacheReadInputTokens)
	r.prompt = int(msg.Usage.InputTokens) + r.cached + int(msg.Usage.CacheCreationInputTokens)
	r.output = int(msg.Usage.OutputTokens)
	return r
}

func decodeChatClient(t *testing.T, out []byte) streamResult {
	t.Helper()
	var acc openai.ChatCompletionAccumulator
	var r streamResult
	for _, data := range clientEvents(t, out) {
		if data == "[DONE]" {
			r.ended = true
			continue
		}
		var chunk openai.ChatCompletionChunk
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chat chunk %s: %v", data, err)
		}
		if !acc.AddChunk(chunk) {
			t.Fatalf("AddChunk refused %s", data)
		}
	}
	if len(acc.Choices) == 0 {
		return r
	}
	msg := acc.Choices[0].Message
	r.text = msg.Content
	for _, call := range msg.ToolCalls {
		r.calls = append(r.calls, scenarioTool{id: call.ID, name: call.Function.Name, args: []string{call.Function.Arguments}})
	}
	r.stop = acc.Choices[0].FinishReason
	r.prompt, r.cached = int(acc.Usage.PromptTokens), int(acc.Usage.PromptTokensDetails.CachedTokens)
	r.output = int(acc.Usage.CompletionTokens)
	return r
}

func decodeResponsesClient(t *testing.T, out []byte) streamResult {
	t.Helper()
	var r streamResult
	seq := int64(-1)
	for _, data := range clientEvents(t, out) {
		var ev responses.ResponseStreamEventUnion
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("responses event %s: %v", data, err)
		}
		if ev.SequenceNumber != seq+1 {
			t.Fatalf("sequence_number %d after %d", ev.SequenceNumber, seq)
		}
		seq = ev.SequenceNumber
		if ev.Type != "response.completed" && ev.Type != "response.incomplete" {
			continue
		}
		r.ended = true
		resp := ev.Response
		for _, item := range resp.Output {
			switch item.Type {
			case "message":
				for _, c := range item.Content {
					r.text += c.Text
				}
			case "function_call":
				r.calls = append(r.calls, scenarioTool{id: item.CallID, name: item.Name, args: []string{item.Arguments.OfString}})
			}
		}
		r.stop = string(resp.Status)
		r.prompt, r.cached = int(resp.Usage.InputTokens), int(resp.Usage.InputTokensDetails.CachedTokens)
		r.output = int(resp.Usage.OutputTokens)
	}
	return r
}
