package main

import (
	"io"
	"net/http"
	"strconv"
)

// The scripted upstream every target is measured against: an
// OpenAI-compatible /v1/chat/completions that reads the request and answers
// at once, with a fixed completion or a fixed stream, so that every
// difference between targets is the proxy's own.

const completion = `{"id":"chatcmpl-bench","object":"chat.completion","created":1767225600,"model":"bench-model",` +
	`"choices":[{"index":0,"message":{"role":"assistant","content":"pong"},"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`

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

// upstream serves the scripted answers; a request body containing
// `"stream":true` gets the stream.
type upstream struct{}

func (upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	if !streaming(body) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(completion)))
		io.WriteString(w, completion)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	f := w.(http.Flusher)
	for _, c := range chunks {
		io.WriteString(w, c)
		f.Flush()
	}
}

// streaming reports whether a request body asks for a stream.
func streaming(body []byte) bool {
	for i := 0; i+len(`"stream":true`) <= len(body); i++ {
		if string(body[i:i+len(`"stream":true`)]) == `"stream":true` {
			return true
		}
	}
	return false
}

// Request bodies: the same for every target (the gateway and Portkey
// rewrite or read "model"; the upstream ignores it).
var (
	plainBody  = []byte(`{"model":"bench","messages":[{"role":"user","content":"ping"}]}`)
	streamBody = []byte(`{"model":"bench","stream":true,"messages":[{"role":"user","content":"ping"}]}`)
)
