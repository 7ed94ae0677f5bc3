package wire

import "testing"

// Refused, per wire: a refusal stop before any content is a refusal; the
// same stop after text or a call, another stop, or a body that does not
// decode is not.
func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		api  API
		body string
		want bool
	}{
		{"messages refusal, no content", Messages, `{"type":"message","role":"assistant","model":"m","content":[],"stop_reason":"refusal","usage":{"input_tokens":1,"output_tokens":0}}`, true},
		{"messages refusal after text", Messages, `{"type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"I can"}],"stop_reason":"refusal","usage":{"input_tokens":1,"output_tokens":2}}`, false},
		{"messages end_turn", Messages, `{"type":"message","role":"assistant","model":"m","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":0}}`, false},
		{"chat content_filter, null content", Chat, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]}`, true},
		{"chat content_filter after text", Chat, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"part"},"finish_reason":"content_filter"}]}`, false},
		{"chat stop", Chat, `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}]}`, false},
		{"responses incomplete for content_filter", Responses, `{"id":"r","object":"response","status":"incomplete","model":"m","incomplete_details":{"reason":"content_filter"},"output":[]}`, true},
		{"responses incomplete for max_output_tokens", Responses, `{"id":"r","object":"response","status":"incomplete","model":"m","incomplete_details":{"reason":"max_output_tokens"},"output":[]}`, false},
		{"not an answer", Chat, `{"choi`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Refused(tc.api, []byte(tc.body)); got != tc.want {
				t.Errorf("Refused = %v, want %v", got, tc.want)
			}
		})
	}
}
