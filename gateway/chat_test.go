package gateway

import (
	"net/http"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

func TestChatServedByPrimary(t *testing.T) {
	f := newFixture(t, llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Text("from a")),
	}), chain(), Options{})
	a := f.post(chatBody("smart", false))
	if a.status != 200 || !strings.Contains(a.body, "from a") {
		t.Fatalf("got %d %s", a.status, a.body)
	}
	if got := a.header.Get("X-Loopctl-Model"); got != "up/a" {
		t.Errorf("x-loopctl-model = %q", got)
	}
	if got := a.header.Get("X-Loopctl-Attempts"); got != "1" {
		t.Errorf("x-loopctl-attempts = %q", got)
	}
	reqs := f.up.Requests()
	if len(reqs) != 1 || reqs[0].Model != "a" || reqs[0].Header.Get("Authorization") != "Bearer sk-upstream" {
		t.Fatalf("upstream saw %+v", reqs)
	}
	if want := strings.Replace(chatBody("smart", false), `"smart"`, `"a"`, 1); string(reqs[0].Body) != want {
		t.Errorf("body forwarded as %s, want %s", reqs[0].Body, want)
	}
}

func TestChatFailsOverWithinTheRequest(t *testing.T) {
	f := newFixture(t, llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Error(503)),
		"b": llmtest.Always(llmtest.Text("from b")),
	}), chain(), Options{Rand: func() float64 { return 0 }})
	a := f.post(chatBody("smart", false))
	if a.status != http.StatusOK || !strings.Contains(a.body, "from b") {
		t.Fatalf("got %d %s", a.status, a.body)
	}
	if a.header.Get("X-Loopctl-Model") != "up/b" || a.header.Get("X-Loopctl-Attempts") != "4" {
		t.Errorf("headers %v", a.header)
	}
	// 3 failed turns of 4 ladder attempts each trip the primary.
	if n := f.up.Count("a"); n != 12 {
		t.Errorf("primary got %d requests, want 12", n)
	}
}
