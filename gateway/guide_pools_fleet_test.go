package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestGuidePoolFleet is docs/fleet.md's "Pool members": a gateway whose
// member breakers and member disables go through a fleet.Store; a member
// disabled through its admin API is a key of the store.
func TestGuidePoolFleet(t *testing.T) {
	srv := redistest.Start(t)
	redisURL := "redis://" + srv.Addr()
	cfg, err := gateway.ParseConfig([]byte(`
upstreams:
  - {name: a, base_url: 'http://127.0.0.1:1/v1'}
  - {name: b, base_url: 'http://127.0.0.1:2/v1'}
pools:
  - {name: sonnet, members: [a/m, b/m]}
models:
  - {name: claude, primary: pool/sonnet}
`))
	if err != nil {
		t.Fatal(err)
	}
	cfg.AdminKeys = []gateway.ClientKey{{Name: "oncall", Key: "sk-admin"}}
	st, err := fleet.Dial(redisURL, fleet.Options{StoreTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g, err := gateway.New(cfg, gateway.Options{
		Backend:        st.ModelBackend,
		MemberBackend:  st.ToolBackend(),
		MemberDisables: st.MemberDisables(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	req := httptest.NewRequest(http.MethodPost, "/admin/breakers/claude",
		strings.NewReader(`{"action":"disable","member":"b/m","ttl":"10m","reason":"INC-1"}`))
	req.Header.Set("Authorization", "Bearer sk-admin")
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	g.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		t.Fatalf("disable: %d %s", w.Code, w.Body)
	}
	if n, err := srv.Command("EXISTS", "{loopctl:mdis:b/m}"); err != nil || n != "1" {
		t.Fatalf("the disable is not in the store: EXISTS %q %v", n, err)
	}
}
