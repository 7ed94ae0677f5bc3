package main

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// The scripted upstream every target is measured against: an
// OpenAI-compatible /v1/chat/completions that reads the request and answers
// at once, with a fixed completion or a fixed stream, so that every
// difference between targets is the proxy's own.

const completion = `{"id":"chatcmpl-bench","object":"chat.completion","created":1767225600,"model":"bench-model",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`

// messagesCompletion is the same answer on the Messages wire.
const messagesCompletion = `{"id":"msg_bench","type":"message","role":"assistant","model":"bench-model",` +
	`"content":[{"type":"text","text":"pong"}],"stop_reason":"end_turn","stop_sequence":null,` +
	`"usage":{"input_tokens":5,"output_tokens":1}}`

// usageChunk is the chat stream's usage chunk, sent before [DONE] when the
// request asks for it (stream_options.include_usage, as translated chat
// streams do).
const usageChunk = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"bench-model",` +
	`"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}` + "\n\n"

// chunks are the events of the streamed answer: a role-only chunk, three
// content chunks, the finish chunk and [DONE]; each is flushed on its own.
var chunks = func() []string {
	ev := func(delta, finish string) string {
		return `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1767225600,"model":"bench-model",` +
			`"choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}` + "\n\n"
	}
	return []string{
		ev(`{"role":"assistant","content":""}`, "null"),
		ev(`{"content":"po"}`, "null"),
		ev(`{"content":"n"}`, "null"),
		ev(`{"content":"g"}`, "null"),
		ev(`{}`, `"stop"`),
		"data: [DONE]\n\n",
	}
}()

// withUsage is the chat stream with its usage chunk before [DONE].
var withUsage = append(chunks[:len(chunks)-1:len(chunks)-1], usageChunk, chunks[len(chunks)-1])

// responsesEvents are the Responses API stream of the same answer: the
// events before the first content (which the gateway holds back), three
// output_text deltas, and response.completed.
var responsesEvents = func() []string {
	ev := func(typ, rest string) string {
		return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"," + rest + "}\n\n"
	}
	resp := func(status string) string {
		return `"response":{"id":"resp_bench","object":"response","created_at":1767225600,"status":"` + status + `","model":"bench-model","output":[]}`
	}
	delta := func(d string) string {
		return ev("response.output_text.delta", `"item_id":"msg_bench","output_index":0,"content_index":0,"delta":"`+d+`"`)
	}
	return []string{
		ev("response.created", `"sequence_number":0,`+resp("in_progress")),
		ev("response.in_progress", `"sequence_number":1,`+resp("in_progress")),
		ev("response.output_item.added", `"output_index":0,"item":{"id":"msg_bench","type":"message","status":"in_progress","role":"assistant","content":[]}`),
		ev("response.content_part.added", `"item_id":"msg_bench","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`),
		delta("po"), delta("n"), delta("g"),
		ev("response.output_text.done", `"item_id":"msg_bench","output_index":0,"content_index":0,"text":"pong"`),
		ev("response.completed", resp("completed")),
	}
}()

// messagesEvents are the Anthropic Messages stream of the same answer.
var messagesEvents = func() []string {
	ev := func(typ, rest string) string {
		return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"" + rest + "}\n\n"
	}
	delta := func(d string) string {
		return ev("content_block_delta", `,"index":0,"delta":{"type":"text_delta","text":"`+d+`"}`)
	}
	return []string{
		ev("message_start", `,"message":{"id":"msg_bench","type":"message","role":"assistant","model":"bench-model","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}`),
		ev("content_block_start", `,"index":0,"content_block":{"type":"text","text":""}`),
		delta("po"), delta("n"), delta("g"),
		ev("content_block_stop", `,"index":0`),
		ev("message_delta", `,"delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}`),
		ev("message_stop", ""),
	}
}()

// upstream serves the scripted answers in its path's wire: a request body
// containing `"stream":true` gets the stream of the wire (chat completions,
// Responses or Messages; a chat stream asking for usage gets the usage
// chunk too), any other the whole answer (chat completions' for every path
// but Messages).
type upstream struct{}

func (upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	events, answer := chunks, completion
	switch {
	case strings.HasSuffix(r.URL.Path, "/responses"):
		events = responsesEvents
	case strings.HasSuffix(r.URL.Path, "/messages"):
		events, answer = messagesEvents, messagesCompletion
	case bytes.Contains(body, []byte(`"include_usage":true`)):
		events = withUsage
	}
	if !streaming(body) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		io.WriteString(w, answer)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	f := w.(http.Flusher)
	for _, c := range events {
		io.WriteString(w, c)
		f.Flush()
	}
}

// streaming reports whether a request body asks for a stream.
func streaming(body []byte) bool { return bytes.Contains(body, []byte(`"stream":true`)) }

// Request bodies: the same for every target (the gateway and Portkey
// rewrite or read "model"; the upstream ignores it).
var (
	plainBody  = []byte(`{"model":"bench","messages":[{"role":"user","content":"ping"}]}`)
	streamBody = []byte(`{"model":"bench","stream":true,"messages":[{"role":"user","content":"ping"}]}`)
)
