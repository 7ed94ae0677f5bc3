package gateway

import (
	"testing"
	"testing/synctest"

	"github.com/loopctl/loopctl-go/llmtest"
)

// TestPoolNameIsNoClientModel: pool/<name> names a pool in the config
// only; a client sending it as its model gets 404 model_not_found, and no
// upstream is reached (GATEWAY §11.1), whether the pool exists or not.
func TestPoolNameIsNoClientModel(t *testing.T) {
	for _, model := range []string{"pool/spare", "pool/nope"} {
		t.Run(model, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := chain()
				cfg.Pools = []Pool{{Name: "spare", Members: []PoolMember{{Target: "up/a"}, {Target: "up/b"}}}}
				b := newBubble(t, llmtest.ByModel(map[string]llmtest.Script{"a": llmtest.Always(llmtest.Text("ok"))}), cfg, Options{})
				a := b.post(chatBody(model, false))
				if a.status != 404 || a.errorField("code") != "model_not_found" || a.errorField("type") != "invalid_request_error" {
					t.Fatalf("got %d %s, want 404 model_not_found", a.status, a.body)
				}
				if n := b.up.Count(""); n != 0 {
					t.Fatalf("the upstream got %d requests, want none", n)
				}
			})
		})
	}
}
