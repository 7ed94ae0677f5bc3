package gateway

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// Item 6: one answer over limits.max_response is a 502 response_too_large,
// no verdict and no retry.
func TestMaxResponseOneAnswer(t *testing.T) {
	cfg := Config{Models: []Model{{Name: "m", Primary: "up/a"}}, Limits: Limits{MaxResponse: 64 << 10}}
	f := newFixture(t, llmtest.Always(llmtest.Text(strings.Repeat("x", 1<<20))), cfg, Options{})
	for range 4 {
		a := f.post(chatBody("m", false))
		if a.status != 502 || a.errorField("code") != "response_too_large" {
			t.Fatalf("%d %.300s", a.status, a.body)
		}
	}
	if n := f.up.Count("a"); n != 4 {
		t.Errorf("%d upstream requests, want 4 (no retries)", n)
	}
	if s := managers(f.gw)["m"].Snapshot(); s.State != fallback.Primary || s.ConsecutiveFailures != 0 {
		t.Errorf("breaker %+v", s)
	}
	if n := f.gw.held.n.Load(); n != 0 {
		t.Errorf("%d bytes still held", n)
	}
}

// Item 6: the whole gateway holds at most ResponseBudgetFactor answers of
// limits.max_response (here no smaller than max_body); past it an answer is a 503 gateway_busy (no
// verdict), and what is held returns to zero.
func TestMaxResponseWholeGateway(t *testing.T) {
	const limit = 256 << 10
	release := make(chan struct{})
	var inFlight atomic.Int64
	cfg := Config{Models: []Model{{Name: "m", Primary: "raw/x"}}, Limits: Limits{MaxResponse: limit, MaxBody: limit}}
	rawUpstream(t, &cfg, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c","object":"chat.completion","pad":"`+strings.Repeat("p", 200<<10))
		w.(http.Flusher).Flush()
		inFlight.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, `","choices":[]}`)
	})
	f := newFixture(t, llmtest.ByModel(nil), cfg, Options{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(free) // before the servers close, also when the test fails early
	const n = 12
	answers := make(chan answer, n)
	for range n {
		go func() { answers <- f.post(chatBody("m", false)) }()
	}
	busy, ok := 0, 0
	deadline := time.After(10 * time.Second)
	for busy+int(inFlight.Load()) < n || busy == 0 {
		select {
		case a := <-answers:
			if a.status != 503 || a.errorField("code") != "gateway_busy" || a.header.Get("Retry-After") == "" {
				t.Fatalf("%d %v %.200s", a.status, a.header, a.body)
			}
			busy++
		case <-deadline:
			t.Fatalf("no answer was refused: %d held, %d bytes", inFlight.Load(), f.gw.held.n.Load())
		case <-time.After(5 * time.Millisecond):
		}
		if h := f.gw.held.n.Load(); h > f.gw.held.limit {
			t.Fatalf("%d bytes held, over the budget of %d", h, f.gw.held.limit)
		}
	}
	free()
	for range n - busy {
		if a := <-answers; a.status == 200 {
			ok++
		} else if a.errorField("code") != "gateway_busy" {
			t.Errorf("%d %.200s", a.status, a.body)
		}
	}
	// A handler frees its bytes after its answer reaches the client:
	// Close waits for every handler to return.
	f.srv.Close()
	if ok == 0 || f.gw.held.n.Load() != 0 {
		t.Errorf("%d served, %d refused, %d bytes still held", ok, busy, f.gw.held.n.Load())
	}
	if s := managers(f.gw)["m"].Snapshot(); s.ConsecutiveFailures != 0 || s.State != fallback.Primary {
		t.Errorf("breaker %+v", s)
	}
	t.Logf("%d answers of 200 KiB with max_response 256 KiB (budget %d KiB): %d served, %d refused 503", n, f.gw.held.limit>>10, ok, n-ok)
}

// Item 7: a stream silent after its first chunk is cut after timeouts.idle,
// not held for timeouts.request.
func TestIdleCutsAStalledStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		resume := make(chan struct{})
		rep := llmtest.Chunked("first ", "never")
		rep.StreamFault = &llmtest.StreamFault{At: 2, Kind: llmtest.StreamPause, Resume: resume}
		defer close(resume)
		cfg := Config{Models: []Model{{Name: "m", Primary: "up/a"}}, Timeouts: Timeouts{Idle: 5 * time.Second}}
		b := newBubble(t, llmtest.Always(rep), cfg, Options{})
		var a answer
		d := elapsed(func() { a = b.post(chatBody("m", true)) })
		if d < 5*time.Second || d > 6*time.Second || !strings.Contains(a.body, `"first "`) || !strings.Contains(a.body, "stream_interrupted") {
			t.Errorf("after %v: %s", d, a.body)
		}
		if s := managers(b.gw)["m"].Snapshot(); s.ConsecutiveFailures != 1 {
			t.Errorf("breaker %+v", s)
		}
	})
}

// Item 8: max_retries: 0 in YAML means no retries.
func TestMaxRetriesZeroMeansNone(t *testing.T) {
	cfg, err := ParseConfig([]byte("upstreams: [{name: up, base_url: 'http://h/v1'}]\nmodels: [{name: m, primary: up/a, attempts: 1}]\nretry: {max_retries: 0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Upstreams = nil // the fixture's "up"
	f := newFixture(t, llmtest.Always(llmtest.Error(500)), cfg, Options{})
	if a := f.post(chatBody("m", false)); a.status != 502 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	if n := f.up.Count("a"); n != 1 {
		t.Errorf("%d upstream requests for one attempt with max_retries: 0", n)
	}
}

// Item 11: with keys, /metrics and /dashboard need one (an admin key when
// admin_keys exist); /healthz and /readyz stay open.
func TestOperationsEndpointsNeedAKey(t *testing.T) {
	for _, tc := range []struct {
		name  string
		admin bool
		key   string
		want  int
	}{
		{"no key", false, "", 401},
		{"wrong key", false, "Bearer nope", 401},
		{"client key", false, "Bearer sk-client", 200},
		{"client key, admin keys set", true, "Bearer sk-client", 401},
		{"admin key", true, "Bearer sk-admin", 200},
		{"admin key by basic auth", true, "Basic " + basic("admin", "sk-admin"), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := withKeys(chain())
			if tc.admin {
				cfg.AdminKeys = []ClientKey{{Name: "ops", Key: "sk-admin"}}
			}
			f := newFixture(t, llmtest.ByModel(nil), cfg, Options{})
			for _, p := range []string{"/metrics", "/dashboard/", "/dashboard/state.json"} {
				if got := f.get(p, tc.key); got != tc.want {
					t.Errorf("%s: %d, want %d", p, got, tc.want)
				}
			}
			for _, p := range []string{"/healthz", "/readyz"} {
				if got := f.get(p, ""); got != 200 {
					t.Errorf("%s: %d", p, got)
				}
			}
		})
	}
}

// Item 12: without client keys the gateway answers only loopback Host
// names and JSON bodies.
func TestLoopbackDoors(t *testing.T) {
	f := newFixture(t, llmtest.Always(llmtest.Text("ok")), chain(), Options{})
	port := f.srv.URL[strings.LastIndex(f.srv.URL, ":"):]
	for _, tc := range []struct {
		host, ctype string
		want        int
	}{
		{"127.0.0.1" + port, "application/json", 200},
		{"localhost" + port, "application/json; charset=utf-8", 200},
		{"[::1]" + port, "application/json", 200},
		{"evil.example" + port, "application/json", 403},
		{"rebind.attacker.test", "application/json", 403},
		{"127.0.0.1" + port, "text/plain", 415},
		{"127.0.0.1" + port, "application/x-www-form-urlencoded", 415},
		{"127.0.0.1" + port, "", 415},
	} {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/v1/chat/completions", strings.NewReader(chatBody("smart", false)))
		req.Host = tc.host
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		res, err := f.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.want {
			t.Errorf("Host %s, Content-Type %q: %d %s", tc.host, tc.ctype, res.StatusCode, b)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/dashboard/state.json", nil)
	req.Host = "evil.example"
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 403 {
		t.Errorf("dashboard by a foreign Host: %d", res.StatusCode)
	}
	if n := f.up.Count(""); n != 3 {
		t.Errorf("%d upstream requests, want 3", n)
	}
}

func (f *fixture) get(path, auth string) int {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

func basic(user, pw string) string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth(user, pw)
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Basic ")
}

// Item 6: client request bodies are held in the same budget as answers: a
// body that does not fit is a 503 gateway_busy with Retry-After (declared
// length or not), and what a request held is freed when it ends.
func TestRequestBodiesInTheBudget(t *testing.T) {
	cfg := Config{Models: []Model{{Name: "m", Primary: "up/a"}}, Limits: Limits{MaxResponse: 64 << 10, MaxBody: 1 << 20}}
	f := newFixture(t, llmtest.Always(llmtest.Text("ok")), cfg, Options{})
	body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("x", 8<<10) + `"}]}`
	post := func(chunked bool) *httptest.ResponseRecorder {
		var rd io.Reader = strings.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // no declared length
		}
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", rd)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		f.gw.ServeHTTP(rec, req)
		return rec
	}
	spare := f.gw.held.limit - 4<<10 // the budget with 4 KiB left
	if !f.gw.held.reserve(spare) {
		t.Fatal("could not take the budget")
	}
	for _, chunked := range []bool{false, true} {
		rec := post(chunked)
		if rec.Code != 503 || !strings.Contains(rec.Body.String(), "gateway_busy") || rec.Header().Get("Retry-After") == "" {
			t.Errorf("chunked %v, budget spent: %d %v %.200s", chunked, rec.Code, rec.Header(), rec.Body)
		}
		if f.up.Count("a") != 0 {
			t.Fatal("a refused request reached the upstream")
		}
	}
	f.gw.held.free(spare)
	for _, chunked := range []bool{false, true} {
		if rec := post(chunked); rec.Code != 200 {
			t.Errorf("chunked %v, budget free: %d %.200s", chunked, rec.Code, rec.Body)
		}
	}
	if n := f.gw.held.n.Load(); n != 0 {
		t.Errorf("%d bytes still held", n)
	}
}

// A pooled buffer grown by a large request body (within limits.max_body)
// is not charged whole when it is drawn for a small answer: readAnswer
// charges at most what one answer may hold.
func TestLargeBodyBufferDoesNotSpendTheBudget(t *testing.T) {
	cfg := Config{Models: []Model{{Name: "m", Primary: "up/a"}}, Limits: Limits{MaxResponse: 64 << 10, MaxBody: 4 << 20}}
	f := newFixture(t, llmtest.Always(llmtest.Text("ok")), cfg, Options{})
	buf := bytes.NewBuffer(make([]byte, 0, 1<<20)) // as a 600 KiB body leaves a pooled buffer
	answer := `{"id":"c","object":"chat.completion","choices":[]}`
	charged, err := f.gw.readAnswer(buf, strings.NewReader(answer), int64(len(answer)))
	if err != nil || buf.String() != answer {
		t.Fatalf("%v %q", err, buf.String())
	}
	if limit := int64(64<<10) + answerChunk; charged > limit {
		t.Errorf("charged %d bytes for a %d-byte answer, over one answer's %d", charged, len(answer), limit)
	}
	f.gw.held.free(charged)
}
