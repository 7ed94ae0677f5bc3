package llmtest

import (
	"reflect"
	"testing"
)

// FuzzDecode feeds arbitrary bodies to both wire decoders: they must not
// panic, must be deterministic, and a body they accept without a problem
// must name a model and hold at least one non-system message.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","max_tokens":5,"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}]}`,
		`{"model":"m","messages":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{"}}]},{"role":"tool","tool_call_id":"c"}]}`,
		`{"messages":null}`, `[]`, `{`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, w := range []wire{openaiWire{}, anthropicWire{}} {
			r1, p1, e1 := w.decode(body)
			r2, p2, e2 := w.decode(body)
			if !reflect.DeepEqual(r1, r2) || p1 != p2 || (e1 == nil) != (e2 == nil) {
				t.Fatalf("%T: decode is not deterministic", w)
			}
			if e1 != nil || p1 != "" {
				continue
			}
			if r1.Model == "" {
				t.Errorf("%T accepted a request without a model: %s", w, body)
			}
			nonSystem := 0
			for _, m := range r1.Messages {
				if m.Role != "system" {
					nonSystem++
				}
			}
			if nonSystem == 0 {
				t.Errorf("%T accepted a request without messages: %s", w, body)
			}
		}
	})
}
