package wire

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// classifyCase is one row of a wire's event table: an event as the
// upstream sends it, and what the gateway's hold-back rule makes of it.
type classifyCase struct {
	name string
	ev   string
	want EventInfo
	err  error // nil: no error
}

// checkClassify runs a wire's event table through Classify.
func checkClassify(t *testing.T, api API, cases []classifyCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Classify(api, []byte(tc.ev))
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if tc.err == nil && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

var (
	hold    = EventInfo{Kind: EventHold}
	content = EventInfo{Kind: EventContent}
	end     = EventInfo{Kind: EventEnd}
)

// errorOf is an error event of type (or code) typ.
func errorOf(typ string) EventInfo { return EventInfo{Kind: EventError, ErrType: typ} }

// TestClassifyChat is chat completions' streaming commit point: held back
// until the first chunk with content (docs/GATEWAY.md §2, §4, §6).
func TestClassifyChat(t *testing.T) {
	checkClassify(t, Chat, []classifyCase{
		{name: ": keep-alive comment → hold", ev: ": keep-alive\n\n", want: hold},
		{name: "role-only chunk → hold", ev: `data: {"choices":[{"delta":{"role":"assistant"}}]}` + "\n\n", want: hold},
		{name: "empty and null content → hold", ev: `data: {"choices":[{"delta":{"role":"assistant","content":""}},{"delta":{"content":null,"refusal":null}}]}` + "\n\n", want: hold},
		{name: "no choices → hold", ev: `data: {"id":"c","choices":[]}` + "\n\n", want: hold},
		{name: "content delta → content", ev: `data: {"choices":[{"delta":{"content":"Hi"}}]}` + "\n\n", want: content},
		{name: "reasoning_content → content", ev: `data: {"choices":[{"delta":{"reasoning_content":"hm"}}]}` + "\n\n", want: content},
		{name: "tool call delta → content", ev: `data: {"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}` + "\n\n", want: content},
		{name: "finish_reason → content", ev: `data: {"choices":[{"delta":{},"finish_reason":"stop"}]}` + "\n\n", want: content},
		{name: "usage chunk → content", ev: `data: {"choices":[],"usage":{"total_tokens":3}}` + "\n\n", want: content},
		{name: "[DONE] → end", ev: "data: [DONE]\n\n", want: end},
		{name: "[DONE] with CRLF, no space → end", ev: "data:[DONE]\r\n\r\n", want: end},
		{name: `{"error":{rate_limit_error}} → error(rate_limit_error)`, ev: `data: {"error":{"message":"slow down","type":"rate_limit_error","code":"rate_limit_exceeded"}}` + "\n\n", want: errorOf("rate_limit_error")},
		{name: `{"error":"text"} → error()`, ev: `data: {"error":"boom"}` + "\n\n", want: errorOf("")},
		{name: `{"error":null} → hold`, ev: `data: {"error":null,"choices":[]}` + "\n\n", want: hold},
		{name: "not JSON → malformed", ev: "data: {\"choices\n\n", err: ErrMalformedStreamEvent},
		{name: "choices not an array → malformed", ev: `data: {"choices":5}` + "\n\n", err: ErrMalformedStreamEvent},
	})
}

// TestClassifyMessages is Messages' streaming commit point: everything
// before the first content_block_delta is held back (docs/GATEWAY.md §6).
func TestClassifyMessages(t *testing.T) {
	checkClassify(t, Messages, []classifyCase{
		{name: "message_start → hold", ev: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\"}}\n\n", want: hold},
		{name: "content_block_start → hold", ev: "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0}\n\n", want: hold},
		{name: "event: ping → hold", ev: "event: ping\ndata: {\"type\": \"ping\"}\n\n", want: hold},
		{name: "comment → hold", ev: ": hi\n\n", want: hold},
		{name: "content_block_delta → content", ev: "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n", want: content},
		{name: "content_block_stop → content", ev: "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n", want: content},
		{name: "message_delta → content", ev: "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n", want: content},
		{name: "data type without event: line → its type", ev: "data: {\"type\":\"message_stop\"}\n\n", want: end},
		{name: "message_stop → end", ev: "event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n", want: end},
		{name: "event: error {overloaded_error} → error(overloaded_error)", ev: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", want: errorOf("overloaded_error")},
		{name: "event: error {api_error} → error(api_error)", ev: "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"x\"}}\n\n", want: errorOf("api_error")},
		{name: "event: error, no data → error()", ev: "event: error\n\n", want: errorOf("")},
		{name: "data not JSON → malformed", ev: "event: ping\ndata: {\"ty\n\n", err: ErrMalformedStreamEvent},
	})
}

// TestClassifyResponses is the Responses API's streaming commit point:
// everything before the first output delta is held back, and
// response.created's id is kept for pinning (docs/GATEWAY.md §6).
func TestClassifyResponses(t *testing.T) {
	checkClassify(t, Responses, []classifyCase{
		{name: "response.created → hold (id)", ev: "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}}\n\n", want: EventInfo{Kind: EventHold, ID: "resp_1"}},
		{name: "response.in_progress → hold", ev: "event: response.in_progress\ndata: {\"type\":\"response.in_progress\"}\n\n", want: hold},
		{name: "response.queued → hold", ev: "event: response.queued\ndata: {}\n\n", want: hold},
		{name: "response.output_item.added → hold", ev: "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\"}\n\n", want: hold},
		{name: "response.content_part.added → hold", ev: "event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\"}\n\n", want: hold},
		{name: "response.output_text.delta → content", ev: "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"Hi\"}\n\n", want: content},
		{name: "response.function_call_arguments.delta → content", ev: "data: {\"type\":\"response.function_call_arguments.delta\",\"delta\":\"{\"}\n\n", want: content},
		{name: "response.completed → end", ev: "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\"}}\n\n", want: end},
		{name: "response.incomplete → end", ev: "event: response.incomplete\ndata: {}\n\n", want: end},
		{name: "error {rate_limit_exceeded} → error(code)", ev: "event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"slow\"}\n\n", want: errorOf("rate_limit_exceeded")},
		{name: "response.failed → error(code)", ev: "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"error\":{\"code\":\"server_error\",\"message\":\"x\"}}}\n\n", want: errorOf("server_error")},
		{name: "data not JSON → malformed", ev: "event: response.created\ndata: {\n\n", err: ErrMalformedStreamEvent},
	})
}

// An api that is not a wire has no events.
func TestClassifyUnknownWire(t *testing.T) {
	if _, err := Classify(API(7), []byte("data: {}\n\n")); err == nil {
		t.Fatal("no error")
	}
}

// TestAfter is the committed-stream fast path: on chat only what may end
// the stream is decoded; the other wires classify as Classify does.
func TestAfter(t *testing.T) {
	cases := []struct {
		name string
		api  API
		ev   string
		want EventInfo
		err  error
	}{
		{name: "chat: a chunk is content, undecoded", api: Chat, ev: `data: {"choices":[{"delta":{"role":"assistant"}}]}` + "\n\n", want: content},
		{name: "chat: an empty event is content", api: Chat, ev: ": keep-alive\n\n", want: content},
		{name: "chat: [DONE] → end", api: Chat, ev: "data: [DONE]\n\n", want: end},
		{name: "chat: error object → error", api: Chat, ev: `data: {"error":{"type":"overloaded_error"}}` + "\n\n", want: errorOf("overloaded_error")},
		{name: "chat: not JSON → malformed", api: Chat, ev: "data: {\"choices\":[\n\n", err: ErrMalformedStreamEvent},
		{name: "messages: message_stop → end", api: Messages, ev: "event: message_stop\ndata: {}\n\n", want: end},
		{name: "responses: response.created → hold (id)", api: Responses, ev: "event: response.created\ndata: {\"response\":{\"id\":\"resp_2\"}}\n\n", want: EventInfo{Kind: EventHold, ID: "resp_2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := After(tc.api, []byte(tc.ev))
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if tc.err == nil && got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestData reads an event's first data line.
func TestData(t *testing.T) {
	cases := []struct {
		name, ev string
		want     []byte // nil: no data line
	}{
		{name: "one data line", ev: "data: {\"a\":1}\n\n", want: []byte(`{"a":1}`)},
		{name: "after an event line, CRLF", ev: "event: x\r\ndata:  [DONE] \r\n\r\n", want: []byte("[DONE]")},
		{name: "the first of two", ev: "data: 1\ndata: 2\n\n", want: []byte("1")},
		{name: "no trailing newline", ev: "data: x", want: []byte("x")},
		{name: "empty data line: as no data", ev: "data:\n\n", want: nil},
		{name: "a comment", ev: ": data: no\n\n", want: nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Data([]byte(tc.ev))
			if !bytes.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// FuzzClassify: Classify and After never panic, agree with each other but
// for chat's undecoded content, and an error event is named error or
// response.failed on the wires that name their events.
func FuzzClassify(f *testing.F) {
	for _, s := range []string{
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n",
		"event: response.created\ndata: {\"response\":{\"id\":\"r\"}}\n\n",
		"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
		"data: {\"error\":{\"type\":\"a\"},\"error\":{}}\n\n",
		"data: [DONE]\n\n", "event: ping\ndata: {\"ty", ": comment\n\n",
	} {
		for api := Chat; api <= Messages; api++ {
			f.Add([]byte(s), uint8(api))
		}
	}
	f.Fuzz(func(t *testing.T, ev []byte, wire uint8) {
		api := API(wire % 3)
		info, err := Classify(api, ev)
		after, aerr := After(api, ev)
		if info.Kind < EventHold || info.Kind > EventError {
			t.Fatalf("kind %d", info.Kind)
		}
		if api != Chat && (after != info || (err == nil) != (aerr == nil)) {
			t.Fatalf("%v: After %+v %v, Classify %+v %v", api, after, aerr, info, err)
		}
		if api == Chat && after.Kind != EventContent && (after != info || (err == nil) != (aerr == nil)) {
			t.Fatalf("chat: After %+v %v, Classify %+v %v", after, aerr, info, err)
		}
		if err == nil && info.Kind == EventError && api != Chat {
			if name, _, _ := eventNameAndData(ev); name != "error" && name != "response.failed" {
				t.Fatalf("error kind for event %q", name)
			}
		}
	})
}

func ExampleClassify() {
	for _, ev := range []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"Hi\"}}\n\n",
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	} {
		info, _ := Classify(Messages, []byte(ev))
		if info.ErrType != "" {
			fmt.Printf("%v(%s)\n", info.Kind, info.ErrType)
			continue
		}
		fmt.Println(info.Kind)
	}
	// Output:
	// hold
	// content
	// error(overloaded_error)
	// end
}
