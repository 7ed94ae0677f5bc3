package gateway

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestScan(t *testing.T) {
	for _, tc := range []struct {
		body   string
		model  string
		stream bool
		err    error
	}{
		{`{"model":"m","messages":[]}`, "m", false, nil},
		{` { "messages" : [{"content":"{\"model\":\"x\"}"}] , "model" : "gpt" , "stream" : true } `, "gpt", true, nil},
		{`{"model":"a\u002fb","stream":false}`, "a/b", false, nil},
		{`{"nested":{"model":"x"},"model":"y"}`, "y", false, nil},
		{`{"model":"m",}`, "", false, errNotJSON},
		{`[1]`, "", false, errNotObject},
		{`{"messages":[]}`, "", false, errNoModel},
		{`{"model":""}`, "", false, errNoModel},
		{`{"model":3}`, "", false, errModelType},
		{`{"model":"a","model":"b"}`, "", false, errTwoModels},
		// Bodies that break the top-level object, and bodies that break
		// only inside a value (json.Valid, which the gateway runs unless
		// the translator reads the body, finds those).
		{`{"model":"m"`, "", false, errNotJSON},
		{`{"model":"m\`, "", false, errNotJSON},
		{`{"model`, "", false, errNotJSON},
		{`{"model":`, "", false, errNotJSON},
		{`{"model" "m"}`, "", false, errNotJSON},
		{`{"model":"m" "x":1}`, "", false, errNotJSON},
		{`{"model":"m","x":[1,}`, "", false, errNotJSON},
		{`{"model":"m"} trailing`, "", false, errNotJSON},
		{`{"model":"m","model":[}`, "", false, errNotJSON},
		{`{"model":"\q"}`, "", false, errNotJSON},
		{``, "", false, errNotJSON},
		{`nul`, "", false, errNotJSON},
	} {
		r, err := scan([]byte(tc.body))
		if err == nil && !json.Valid([]byte(tc.body)) {
			r, err = request{}, errNotJSON
		}
		if err != tc.err || r.model != tc.model || r.stream != tc.stream {
			t.Errorf("scan(%s) = %+v, %v; want %q %v %v", tc.body, r, err, tc.model, tc.stream, tc.err)
		}
	}
}

// The rewrite changes the model and nothing else.
func FuzzRewrite(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`), "up/x")
	f.Add([]byte(`{"a":[1,{"b":"}"}],"model":"q\"","c":null}`), "é")
	f.Fuzz(func(t *testing.T, body []byte, model string) {
		r, err := scan(body) // on any bytes: no panic
		// The gateway forwards a body as it is only once json.Valid has
		// accepted it (the translator checks the others as it reads them).
		if err != nil || !json.Valid(body) || !utf8.ValidString(model) { // upstream model names come from the config
			return
		}
		out := rewrite(nil, body, r, quote(model))
		var before, after map[string]json.RawMessage
		if json.Unmarshal(body, &before) != nil {
			t.Fatalf("scan accepted %q, which is not an object", body)
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("rewrite made invalid JSON %q: %v", out, err)
		}
		var got string
		if json.Unmarshal(after["model"], &got) != nil || got != model {
			t.Fatalf("model %s, want %q", after["model"], model)
		}
		for k, v := range before {
			if k != "model" && string(after[k]) != string(v) {
				t.Fatalf("%s changed: %s -> %s", k, v, after[k])
			}
		}
	})
}
