package gateway

import (
	"bytes"
	"io"
	"testing"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
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

// A Messages or Responses stream read through commit and then event by
// event as pump reads it (wire.After) ends, and what commit holds back is
// the body's own bytes. The classifiers' own fuzz target is
// gateway/internal/wire's FuzzClassify.
func FuzzWireStream(f *testing.F) {
	for _, s := range wireSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s+s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, responses bool) {
		w := messagesEndpoint
		if responses {
			w = responsesEndpoint
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
			info, err := wire.After(w.wire, ev)
			if err != nil || info.Kind == wire.EventError {
				return
			}
			st.done = info.Kind == wire.EventEnd
			if n > len(body) {
				t.Fatal("more events than bytes")
			}
		}
	})
}

// The events that end a broken stream are read back one by one by the
// gateway's own event reader, and each one is an error event of its wire
// (chat's data: {"error": ...} too).
func TestBrokenEvents(t *testing.T) {
	for _, w := range []*endpoint{chatEndpoint, responsesEndpoint, messagesEndpoint} {
		ev := wire.Broken(w.wire, `a "quoted" message`, "resp_1", false)
		for len(ev) > 0 {
			st := newStream(bytes.NewReader(ev), w)
			one, err := st.next()
			if err != nil {
				t.Fatalf("%s: %v in %q", w.label, err, ev)
			}
			if info, err := wire.Classify(w.wire, one); err != nil || info.Kind != wire.EventError {
				t.Errorf("%s: %q is %v %v", w.label, one, info.Kind, err)
			}
			ev = ev[len(one):]
			st.release()
		}
	}
}
