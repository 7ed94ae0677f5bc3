package gateway

import (
	"bytes"
	"io"
	"testing"
)

var wireSeeds = []string{
	"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
	"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"x\"}}\n\n",
	"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"o\"}}\n\n",
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}\n\n",
	"data: {\"type\":\"response.output_text.delta\",\"delta\":\"x\"}\n\n",
	"event: response.completed\r\ndata: {}\r\n\r\n",
	"event: ping\ndata: {\"ty",
	": comment\n\n",
}

// The Messages and Responses classifiers never panic, agree with the event
// name when there is one, and a stream read through commit and after ends.
func FuzzWireStream(f *testing.F) {
	for _, s := range wireSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s+s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, responses bool) {
		w := wireMessages
		if responses {
			w = wireResponses
		}
		info, err := w.classify(body)
		if err == nil && info.kind == kindError {
			if name, _, _ := sseEvent(body); name != "error" && name != "response.failed" {
				t.Fatalf("error kind for event %q", name)
			}
		}
		st := newStream(bytes.NewReader(body), w)
		defer st.release()
		if err := st.commit(holdLimits{events: 16, bytes: 64 << 10}); err != nil {
			return
		}
		if !bytes.Contains(body, st.held.Bytes()) { // stray blank lines are dropped
			t.Fatalf("held %q is not in the body", st.held.Bytes())
		}
		for n := 0; !st.done; n++ {
			ev, err := st.next()
			if err == io.EOF || err != nil {
				return
			}
			info, err := w.after(ev)
			if err != nil || info.kind == kindError {
				return
			}
			st.done = info.kind == kindDone
			if n > len(body) {
				t.Fatal("more events than bytes")
			}
		}
	})
}

// brokenEvent is valid SSE with JSON data on every wire.
func TestBrokenEvents(t *testing.T) {
	for _, w := range []*wire{wireChat, wireResponses, wireMessages} {
		ev := w.brokenEvent(`a "quoted" message`, "resp_1", false)
		for len(ev) > 0 {
			st := newStream(bytes.NewReader(ev), w)
			one, err := st.next()
			if err != nil {
				t.Fatalf("%s: %v in %q", w.api, err, ev)
			}
			if info, err := w.classify(one); err != nil || (info.kind != kindError && w != wireChat) {
				t.Errorf("%s: %q is %v %v", w.api, one, info.kind, err)
			}
			ev = ev[len(one):]
			st.release()
		}
	}
}
