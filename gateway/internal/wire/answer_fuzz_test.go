package wire

import (
	"encoding/json"
	"testing"
)

// FuzzResponse: no upstream answer, on any wire pair, makes Response
// panic, and every answer it returns is valid JSON.
func FuzzResponse(f *testing.F) {
	seeds := []string{messagesToolAnswer, chatToolAnswer, responsesToolAnswer, `{}`, `null`, `[]`,
		`{"choices":[{"message":{"content":[{"type":"text","text":"\u0000"}],"tool_calls":[{"function":{"arguments":"{\"input\":1}"}}]}}]}`,
		`{"type":"message","content":[{"type":"tool_use","input":"x"},{"type":"text","text":"a END b"}]}`,
		`{"status":"incomplete","output":[{"type":"custom_tool_call","input":"\ud800"},{"type":"message","content":[{"type":"refusal"}]}]}`}
	for _, s := range seeds {
		for pair := range uint8(9) {
			f.Add(pair, []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, pair uint8, body []byte) {
		tr := &Translation{
			From:  API(pair % 3),
			To:    Target{API: API(pair / 3 % 3), Model: "m"},
			tools: map[string]Tool{"f": {Name: "f", Custom: true}, "g": {Name: "long", Namespace: "ns"}},
			stops: []string{"END"},
		}
		out, err := tr.Response(body)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON out of %s: %s", body, out)
		}
	})
}
