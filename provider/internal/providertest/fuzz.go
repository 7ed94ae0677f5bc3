package providertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/loopctl/loopctl-go/retry"
)

// FuzzResponseBody serves arbitrary bytes (seeded with the shared seeds,
// then the provider's own) as a 200 JSON response: Complete must not
// panic, and a failure must never be a *retry.StatusError or Permanent (a
// body that cannot be understood is transient). With
// Harness.FillsToolCallIDs, every returned tool call must have an ID.
func FuzzResponseBody(f *testing.F, h Harness, seeds ...string) {
	h.check(f)
	for _, s := range append([]string{``, `{`, `null`, `[]`}, seeds...) {
		f.Add([]byte(s))
	}
	var body atomic.Pointer[[]byte]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*body.Load())
	}))
	defer srv.Close()
	p := h.NewProvider(f, srv.URL, nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		body.Store(&b)
		resp, err := p.Complete(context.Background(), UserRequest("m"))
		if err == nil {
			if h.FillsToolCallIDs {
				for _, c := range resp.Message.ToolCalls {
					if c.ID == "" {
						t.Errorf("tool call without id: %+v", c)
					}
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
