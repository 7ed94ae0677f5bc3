package openai_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/loopctl/loopctl-go/retry"
)

// FuzzResponseBody serves arbitrary bytes as a 200 response: Complete must
// not panic, and a failure must never be a StatusError or Permanent (a body
// that cannot be understood is transient).
func FuzzResponseBody(f *testing.F) {
	for _, s := range []string{
		``, `{`, `null`, `[]`, `{"choices":[]}`, `{"choices":null}`, `{"choices":[{}]}`,
		`{"choices":[{"message":{"content":"hi","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{"}}]}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"type":"custom","custom":{"name":"c","input":"x"}}]}}],"usage":{"prompt_tokens":-1}}`,
		`{"choices":"nope","usage":"x"}`,
	} {
		f.Add([]byte(s))
	}
	var body atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*body.Load())
	}))
	defer srv.Close()
	p := newProvider(f, srv.URL, nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		body.Store(&b)
		resp, err := p.Complete(context.Background(), userReq("m"))
		if err == nil {
			for _, c := range resp.Message.ToolCalls {
				if c.ID == "" {
					t.Errorf("tool call without id: %+v", c)
				}
			}
			return
		}
		var se *retry.StatusError
		if errors.As(err, &se) || retry.Classify(err) == retry.Permanent {
			t.Errorf("200 body %q gave %v (class %v)", b, err, retry.Classify(err))
		}
	})
}
