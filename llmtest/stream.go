package llmtest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// StreamFaultKind is what goes wrong with a stream; see [StreamFault].
type StreamFaultKind int

const (
	// StreamCut ends the stream abruptly before event At: the events
	// before it are sent, then the connection is dropped (the chunked body
	// is never terminated, so the client reads an unexpected EOF).
	StreamCut StreamFaultKind = iota
	// StreamCutMidEvent sends the first half of event At's bytes, then
	// drops the connection.
	StreamCutMidEvent
	// StreamReset resets the connection (TCP RST) before event At.
	StreamReset
	// StreamStall stops before event At and waits until the request's
	// context ends (the client gives up) or the Handler is released, then
	// drops the connection. With At 0 the client gets the response headers
	// and no event at all.
	StreamStall
	// StreamPause stops before event At until Resume is closed, then goes
	// on (a slow upstream a test controls).
	StreamPause
	// StreamMalformed replaces event At with a data line of cut-off JSON,
	// then goes on.
	StreamMalformed
	// StreamError replaces event At with the wire's error event and ends
	// the stream there, without its end marker, as the services do when a
	// stream fails on their side: chat completions data: {"error": {...}};
	// Responses an "error" event (code server_error); Messages an
	// "error" event of type api_error.
	StreamError
	// StreamNoEnd ends the body cleanly (a terminated chunked body) before
	// event At: the stream lacks its end marker ([DONE], message_stop,
	// response.completed).
	StreamNoEnd
	// StreamOverloaded is StreamError with an overload: on Messages an
	// "error" event of type overloaded_error, as Anthropic sends when it
	// is overloaded after the response headers; on the OpenAI wires an
	// error event of type overloaded_error.
	StreamOverloaded
)

// StreamFault makes a streamed reply go wrong at one event. Events are
// counted from 0 in the order they are sent. Chat completions: the
// role-only chunk (unless [Reply.NoRole]), each content chunk, the
// tool-call chunk (if any), the finish chunk, then "data: [DONE]".
// Messages: message_start, content_block_start of the text (when there is
// text), ping, one content_block_delta per chunk, content_block_stop, then
// per tool call content_block_start, content_block_delta and
// content_block_stop, then message_delta and message_stop. Responses:
// response.created, response.in_progress, then for the text
// response.output_item.added, response.content_part.added, one
// response.output_text.delta per chunk, response.output_text.done,
// response.content_part.done and response.output_item.done, then per tool
// call response.output_item.added, response.function_call_arguments.delta,
// response.function_call_arguments.done and response.output_item.done, then
// response.completed.
type StreamFault struct {
	At     int
	Kind   StreamFaultKind
	Resume <-chan struct{} // StreamPause: closed to go on
}

// Chunked returns a Reply whose streamed text comes in these content
// chunks (its non-streamed text is their concatenation).
func Chunked(chunks ...string) Reply {
	return Reply{Text: strings.Join(chunks, ""), Chunks: chunks}
}

// streamer is a wire format that can stream replies.
type streamer interface {
	stream(w http.ResponseWriter, hr *http.Request, r Request, rep Reply, released <-chan struct{})
}

// stream sends rep as OpenAI chat.completion.chunk server-sent events.
func (openaiWire) stream(w http.ResponseWriter, hr *http.Request, r Request, rep Reply, released <-chan struct{}) {
	id := fmt.Sprintf("chatcmpl-fake-%d", r.Seq)
	chunk := func(delta map[string]any, finish any) string {
		b, _ := json.Marshal(map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": r.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}},
		})
		return "data: " + string(b) + "\n\n"
	}
	var events []string
	if !rep.NoRole {
		events = append(events, chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	}
	texts := rep.Chunks
	if texts == nil && rep.Text != "" {
		texts = []string{rep.Text}
	}
	for _, t := range texts {
		events = append(events, chunk(map[string]any{"content": t}, nil))
	}
	finish := "stop"
	if len(rep.ToolCalls) > 0 {
		finish = "tool_calls"
		var calls []any
		for i, c := range rep.ToolCalls {
			cid := c.ID
			if cid == "" {
				cid = fmt.Sprintf("call_%d_%d", r.Seq, i)
			}
			calls = append(calls, map[string]any{"index": i, "id": cid, "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
		}
		events = append(events, chunk(map[string]any{"tool_calls": calls}, nil))
	}
	events = append(events, chunk(map[string]any{}, finish))
	if r.includeUsage {
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": r.Model,
			"choices": []any{}, "usage": rep.Usage.openAI()})
		events = append(events, "data: "+string(b)+"\n\n")
	}
	events = append(events, "data: [DONE]\n\n")

	sendEvents(w, hr, events, rep.StreamFault, released, func(k StreamFaultKind) string {
		switch k {
		case StreamMalformed:
			return "data: {\"id\":\"" + id + "\",\"choi\n\n"
		case StreamOverloaded:
			return "data: " + openaiWire{}.errorBody(529, "llmtest: overloaded") + "\n\n"
		}
		return "data: " + openaiWire{}.errorBody(http.StatusInternalServerError, "llmtest: the stream failed") + "\n\n"
	})
}

// sendEvents sends events as a server-sent event stream, going wrong as f
// says; swap returns the event that replaces event f.At for
// StreamMalformed, StreamError and StreamOverloaded (the last two end the
// stream after it).
func sendEvents(w http.ResponseWriter, hr *http.Request, events []string, f *StreamFault, released <-chan struct{}, swap func(StreamFaultKind) string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for i, ev := range events {
		if f != nil && f.At == i {
			switch f.Kind {
			case StreamCut:
				panic(http.ErrAbortHandler)
			case StreamCutMidEvent:
				_, _ = w.Write([]byte(ev[:len(ev)/2]))
				_ = rc.Flush()
				panic(http.ErrAbortHandler)
			case StreamReset:
				reset(w)
				return
			case StreamStall:
				select {
				case <-hr.Context().Done():
				case <-released:
				}
				panic(http.ErrAbortHandler)
			case StreamPause:
				select {
				case <-f.Resume:
				case <-hr.Context().Done():
					panic(http.ErrAbortHandler)
				case <-released:
					panic(http.ErrAbortHandler)
				}
			case StreamMalformed:
				ev = swap(f.Kind)
			case StreamError, StreamOverloaded:
				_, _ = w.Write([]byte(swap(f.Kind)))
				_ = rc.Flush()
				return
			case StreamNoEnd:
				return // a clean end of the body, without the end marker
			}
		}
		if _, err := w.Write([]byte(ev)); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// reset drops the connection with a TCP RST (no FIN), as a crashed or
// misbehaving peer does.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
