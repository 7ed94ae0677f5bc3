package gateway

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// vertexConfig is a gateway with model m: primary vertex/<primary>, backup
// an/backup when an is set.
func vertexConfig(vertex, an, primary string) Config {
	m := Model{Name: "m", Primary: "vertex/" + primary}
	ups := []Upstream{{Name: "vertex", API: APIVertex, Region: "us-east5", Project: "loopctl-test", BaseURL: vertex}}
	if an != "" {
		m.Chain = []string{"an/backup"}
		ups = append(ups, Upstream{Name: "an", API: APIAnthropic, BaseURL: an, APIKey: "sk-an"})
	}
	return Config{Upstreams: ups, Models: []Model{m}}
}

func TestVertexTokenReusedUntilExpiry(t *testing.T) {
	tokens := newTokenServer(t)
	useServiceAccount(t, tokens)
	vx := newVertexFake(t, tokens, "loopctl-test", "us-east5", weather)
	srv := cloudGateway(t, vertexConfig(vx.URL, "", "claude-sonnet-4-5@20250929"), Options{})

	for i, body := range []string{messagesBody("m", false), messagesBody("m", true), chatBody("m", true)} {
		path := "/v1/messages"
		if i == 2 {
			path = "/v1/chat/completions"
		}
		if a := postTo(t, srv, path, body); a.status != 200 || !strings.Contains(a.body, "from b") {
			t.Fatalf("%s: %d %s", path, a.status, a.body)
		}
	}
	c := postTo(t, srv, "/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hello there"}]}`)
	if c.status != 200 || !strings.Contains(c.body, "input_tokens") {
		t.Fatalf("count_tokens: %d %s", c.status, c.body)
	}
	if got := tokens.tokens(); len(got) != 1 || vx.unauthorizedSeen != 0 {
		t.Fatalf("tokens issued %v, %d unauthorized requests: one token, reused until it expires", got, vx.unauthorizedSeen)
	}
	reqs := vx.log.all()
	want := []string{":rawPredict", ":streamRawPredict", ":streamRawPredict", "count-tokens:rawPredict"}
	for i, r := range reqs {
		if !strings.HasPrefix(r.path, "/v1/projects/loopctl-test/locations/us-east5/publishers/anthropic/models/") || !strings.HasSuffix(r.path, want[i]) {
			t.Errorf("request %d: path %s, want ...%s", i, r.path, want[i])
		}
		if r.header.Get("Authorization") != "Bearer tok-1" || r.header.Get("Anthropic-Version") != "" {
			t.Errorf("request %d: headers %v", i, r.header)
		}
	}
	if reqs[1].body["stream"] != true || reqs[3].body["model"] != "m" && reqs[3].body["model"] != "claude-sonnet-4-5@20250929" {
		t.Errorf("stream %v (want kept), count-tokens model %v (want kept)", reqs[1].body["stream"], reqs[3].body["model"])
	}

	// A token that expires within oauth2's early-refresh window is
	// replaced before each request: the fake accepts only the newest.
	tokens.mu.Lock()
	tokens.expiresIn = 5
	tokens.mu.Unlock()
	srv2 := cloudGateway(t, vertexConfig(vx.URL, "", "claude"), Options{})
	for range 3 {
		if a := postTo(t, srv2, "/v1/messages", messagesBody("m", false)); a.status != 200 {
			t.Fatalf("%d %s", a.status, a.body)
		}
	}
	if got := tokens.tokens(); len(got) != 1+3 || vx.unauthorizedSeen != 0 {
		t.Fatalf("tokens issued %v, %d unauthorized: a token about to expire is refreshed before it is sent", got, vx.unauthorizedSeen)
	}
}

func TestVertexResourceExhausted(t *testing.T) {
	tokens := newTokenServer(t)
	useServiceAccount(t, tokens)
	vx := newVertexFake(t, tokens, "loopctl-test", "us-east5", weather)
	an := llmtest.NewAnthropic(weather)
	t.Cleanup(an.Close)
	gw, err := New(vertexConfig(vx.URL, an.BaseURL(), "exhausted"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := gw.upstreams["vertex"].cloud
	for model, want := range map[string]string{"exhausted-quota": "quota", "exhausted": "rate-limit"} {
		srv := cloudGateway(t, vertexConfig(vx.URL, an.BaseURL(), model), Options{})
		a := postTo(t, srv, "/v1/chat/completions", chatBody("m", false))
		if a.status != 200 || a.header.Get("X-Loopctl-Model") != "an/backup" {
			t.Errorf("%s: %d from %s: %s", model, a.status, a.header.Get("X-Loopctl-Model"), a.body)
		}
		rec := httptest.NewRecorder()
		googleAnswer(rec, 429, "RESOURCE_EXHAUSTED", map[string]string{"quota": "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests", "rate-limit": "Resource exhausted, please try again later."}[want])
		f := failure(gw.cloudAnswerError(c, rec.Result(), rec.Body.Bytes()), time.Now())
		if got := map[fallback.Kind]string{fallback.Quota: "quota", fallback.RateLimit: "rate-limit"}[f.Kind]; got != want {
			t.Errorf("%s: verdict %+v, want %s", model, f, want)
		}
	}
}

func TestAzureAPIKey(t *testing.T) {
	az := newAzureFake(t, "az-secret", weather)
	down := llmtest.NewOpenAI(func(llmtest.Request) llmtest.Reply { return llmtest.Error(500) })
	t.Cleanup(down.Close)
	srv := cloudGateway(t, Config{
		Upstreams: []Upstream{
			{Name: "openai", BaseURL: down.BaseURL(), APIKey: "sk-openai"},
			{Name: "azure", BaseURL: az.base(), APIKey: "az-secret", Auth: Auth{Type: AuthAPIKey}},
			{Name: "azure-wrong", BaseURL: az.base(), APIKey: "not-the-key", Auth: Auth{Type: AuthAPIKey}},
		},
		Models: []Model{
			{Name: "m", Primary: "openai/gpt-4.1", Chain: []string{"azure/my-gpt-4-1-deployment"}},
			{Name: "wrong", Primary: "azure-wrong/my-gpt-4-1-deployment"},
		},
	}, Options{})
	a := postTo(t, srv, "/v1/chat/completions", chatBody("m", true))
	if a.status != 200 || a.header.Get("X-Loopctl-Model") != "azure/my-gpt-4-1-deployment" || !strings.Contains(a.body, "[DONE]") || az.bad != 0 {
		t.Fatalf("%d from %s (%d refused): %s", a.status, a.header.Get("X-Loopctl-Model"), az.bad, a.body)
	}
	if got := az.oa.Requests(); len(got) != 1 || got[0].Model != "my-gpt-4-1-deployment" {
		t.Fatalf("azure got %+v", got)
	}
	if w := postTo(t, srv, "/v1/chat/completions", chatBody("wrong", false)); w.status == 200 || az.bad == 0 || strings.Contains(w.body, "not-the-key") {
		t.Fatalf("a wrong api-key: %d %s", w.status, w.body)
	}
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(m), "azure/my-gpt-4-1-deployment") || strings.Contains(string(m), "secret") || strings.Contains(string(m), "not-the-key") {
		t.Errorf("/metrics: %d, %d bytes: want the models and no key", resp.StatusCode, len(m))
	}
}

// tokenHelper writes a token helper script that prints tok-<n>, n counting
// its runs in dir/count, or fails (printing a secret) when dir/fail exists.
func tokenHelper(t *testing.T) (argv []string, runs func() int, fail func()) {
	dir := t.TempDir()
	script := `n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
if [ -e fail ]; then echo "secret-helper-output"; exit 3; fi
echo "  tok-$n  "`
	argv = []string{"sh", "-c", "cd " + dir + " && " + script}
	runs = func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "count"))
		var n int
		_, _ = fmt.Sscan(string(b), &n)
		return n
	}
	fail = func() { _ = os.WriteFile(filepath.Join(dir, "fail"), nil, 0o644) }
	return argv, runs, fail
}

func TestCommandAuthRotates(t *testing.T) {
	argv, runs, fail := tokenHelper(t)
	var mu sync.Mutex
	accept := "tok-1"
	oa := llmtest.NewOpenAIHandler(weather)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := r.Header.Get("Authorization") == "Bearer "+accept
		mu.Unlock()
		if !ok {
			http.Error(w, `{"error":{"message":"bad token","type":"invalid_request_error"}}`, http.StatusUnauthorized)
			return
		}
		oa.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)
	backup := llmtest.NewOpenAI(weather)
	t.Cleanup(backup.Close)
	now := time.Date(2026, 12, 3, 4, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	var logs bytes.Buffer
	srv := cloudGateway(t, Config{
		Upstreams: []Upstream{
			{Name: "helper", BaseURL: up.URL + "/v1", Auth: Auth{Type: AuthCommand, Command: argv, TTL: time.Minute}},
			{Name: "backup", BaseURL: backup.BaseURL(), APIKey: "sk-backup"},
		},
		Models: []Model{{Name: "m", Primary: "helper/gpt", Chain: []string{"backup/gpt"}}},
	}, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Now: func() time.Time { clock.Lock(); defer clock.Unlock(); return now }})
	served := func(step, from string, wantRuns int) {
		t.Helper()
		a := postTo(t, srv, "/v1/chat/completions", chatBody("m", false))
		if a.status != 200 || a.header.Get("X-Loopctl-Model") != from || runs() != wantRuns && wantRuns >= 0 {
			t.Fatalf("%s: %d from %s, helper ran %d times (want %s, %d runs): %s", step, a.status, a.header.Get("X-Loopctl-Model"), runs(), from, wantRuns, a.body)
		}
	}
	served("first request", "helper/gpt", 1)
	served("within the ttl", "helper/gpt", 1)
	clock.Lock()
	now = now.Add(time.Minute)
	clock.Unlock()
	mu.Lock()
	accept = "tok-2"
	mu.Unlock()
	served("after the ttl", "helper/gpt", 2)
	mu.Lock()
	accept = "tok-3" // the upstream revoked tok-2: its 401 re-runs the helper
	mu.Unlock()
	served("after a 401", "helper/gpt", 3)
	fail()
	mu.Lock()
	accept = "tok-4"
	mu.Unlock()
	clock.Lock()
	now = now.Add(time.Minute)
	clock.Unlock()
	served("the helper fails: the backup serves", "backup/gpt", -1) // once per attempt until the primary trips
	if runs() < 4 {
		t.Errorf("the helper ran %d times: after its ttl it must run again", runs())
	}
	if strings.Contains(logs.String(), "secret-helper-output") || strings.Contains(logs.String(), "tok-") {
		t.Errorf("the log shows the helper's output or a token:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "auth command failed") {
		t.Errorf("the log does not say the helper failed:\n%s", logs.String())
	}
}
