package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestBroken is the end of a stream broken after its first content, per
// wire (docs/GATEWAY.md §6): the wire's own error event, and for
// Responses response.failed even after the upstream's own error event.
func TestBroken(t *testing.T) {
	const (
		chatError      = `data: {"error":{"message":"broke: \"x\"","type":"upstream_error","param":null,"code":"stream_interrupted"}}` + "\n\n"
		messagesError  = "event: error\n" + `data: {"type":"error","error":{"type":"api_error","message":"broke: \"x\""}}` + "\n\n"
		responsesError = "event: error\n" + `data: {"code":"stream_interrupted","message":"broke: \"x\"","param":null,"type":"error"}` + "\n\n"
		responseFailed = "event: response.failed\n" + `data: {"response":{"error":{"code":"stream_interrupted","message":"broke: \"x\""},"id":"resp_1","object":"response","output":[],"status":"failed"},"type":"response.failed"}` + "\n\n"
	)
	cases := []struct {
		name      string
		api       API
		forwarded bool // the upstream's own error event reached the client
		want      string
	}{
		{name: "chat: data: {error stream_interrupted}, no [DONE]", api: Chat, want: chatError},
		{name: "chat, upstream error forwarded: nothing", api: Chat, forwarded: true, want: ""},
		{name: "messages: event: error {api_error}", api: Messages, want: messagesError},
		{name: "messages, upstream error forwarded: nothing", api: Messages, forwarded: true, want: ""},
		{name: "responses: error {stream_interrupted}, then response.failed", api: Responses, want: responsesError + responseFailed},
		{name: "responses, upstream error forwarded: response.failed", api: Responses, forwarded: true, want: responseFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Broken(tc.api, `broke: "x"`, "resp_1", tc.forwarded)
			if string(got) != tc.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// Every event Broken returns is JSON data that Classify calls an error
// event of its wire, whatever the message holds.
func TestBrokenIsErrorEvent(t *testing.T) {
	for api := Chat; api <= Messages; api++ {
		for _, msg := range []string{"", `"quoted" <b>&`, "line\nbreak\r\x00", "\xff\u2028"} {
			evs := Broken(api, msg, "resp_\"1", false)
			if !bytes.HasSuffix(evs, []byte("\n\n")) {
				t.Fatalf("%v %q: %q is not framed", api, msg, evs)
			}
			for _, ev := range bytes.SplitAfter(evs[:len(evs)-2], []byte("\n\n")) {
				if !json.Valid(Data(ev)) {
					t.Errorf("%v %q: data of %q", api, msg, ev)
				}
				if info, err := Classify(api, ev); err != nil || info.Kind != EventError {
					t.Errorf("%v %q: %q is %v %v", api, msg, ev, info.Kind, err)
				}
			}
		}
	}
}
