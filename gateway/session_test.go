package gateway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/pool"
)

// GATEWAY §11.2: a request's session key, from the header or the body's
// fields in their order, found by the one scan pass.
func TestSessionOf(t *testing.T) {
	for _, tc := range []struct {
		name, header, body string
		key                string // the expected session key; "": none
	}{
		{"none", "", `{"model":"m","messages":[]}`, ""},
		{"header", "conv-1", `{"model":"m"}`, "conv-1"},
		{"header over every field", "conv-1", `{"model":"m","metadata":{"user_id":"u"},"prompt_cache_key":"p","user":"x"}`, "conv-1"},
		{"empty header: the body", "", `{"model":"m","user":"x"}`, "x"},
		{"claude code", "", `{"model":"m","metadata":{"user_id":"user_ab_account_cd_session_ef"},"messages":[]}`, "user_ab_account_cd_session_ef"},
		{"user_id over prompt_cache_key", "", `{"user":"x","prompt_cache_key":"p","metadata":{"user_id":"u"},"model":"m"}`, "u"},
		{"prompt_cache_key over user", "", `{"model":"m","user":"x","prompt_cache_key":"p"}`, "p"},
		{"user", "", `{"model":"m","user":"x"}`, "x"},
		{"empty user_id: the next field", "", `{"model":"m","metadata":{"user_id":""},"prompt_cache_key":"p"}`, "p"},
		{"user_id not a string", "", `{"model":"m","metadata":{"user_id":7},"user":"x"}`, "x"},
		{"metadata not an object", "", `{"model":"m","metadata":"u","user":"x"}`, "x"},
		{"user_id nested deeper", "", `{"model":"m","metadata":{"a":{"user_id":"deep"}}}`, ""},
		{"user_id after other metadata", "", `{"model":"m","metadata":{"a":{"user_id":"deep"}, "b":[1,{}] , "user_id" : "u"}}`, "u"},
		{"top-level user_id is not metadata's", "", `{"model":"m","user_id":"u"}`, ""},
		{"fields inside messages are not top-level", "", `{"model":"m","messages":[{"user":"x","prompt_cache_key":"p","metadata":{"user_id":"u"}}]}`, ""},
		{"escapes decoded", "", `{"model":"m","prompt_cache_key":"conv\u002d1"}`, "conv-1"},
		{"a key given twice: the last", "", `{"model":"m","user":"x","user":"y"}`, "y"},
		{"null user", "", `{"model":"m","user":null}`, ""},
		{"a value that names a key", "", `{"model":"m","text":"\"user\":\"x\""}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := scan([]byte(tc.body))
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			h := http.Header{}
			if tc.header != "" || tc.name == "empty header: the body" {
				h.Set("x-loopctl-session", tc.header)
			}
			if got, want := sessionOf(h, &q), pool.SessionOf(tc.key); got != want {
				t.Errorf("session %v, want the hash of %q (%v)", got, tc.key, want)
			}
		})
	}
}

// Recording the session fields costs the scan no allocation: a body with
// them allocates what one without them does (the model name, the same in each).
func TestScanSessionFieldsAllocateNothing(t *testing.T) {
	allocs := func(body string) float64 {
		b := []byte(body)
		return testing.AllocsPerRun(100, func() { _, _ = scan(b) })
	}
	plain := allocs(`{"model":"claude-sonnet-4-5","messages":[]}`)
	for _, body := range []string{
		`{"model":"claude-sonnet-4-5","messages":[],"metadata":{"user_id":"user_ab_session_cd"}}`,
		`{"model":"claude-sonnet-4-5","messages":[],"prompt_cache_key":"conv-1","user":"x"}`,
		claudeCodeBody(3),
	} {
		if got := allocs(body); got != plain {
			t.Errorf("scan allocates %v times with session fields, %v without: %.60s", got, plain, body)
		}
	}
}

// keyWatcher is an Observer that keeps everything it is told, formatted.
type keyWatcher struct {
	mu  sync.Mutex
	out bytes.Buffer
}

func (k *keyWatcher) add(v any) {
	k.mu.Lock()
	defer k.mu.Unlock()
	fmt.Fprintf(&k.out, "%+v\n", v)
}

func (k *keyWatcher) StartRequest(ctx context.Context, r RequestStart) context.Context {
	k.add(r)
	return ctx
}
func (k *keyWatcher) EndRequest(_ context.Context, r RequestEnd) { k.add(r) }
func (k *keyWatcher) StartAttempt(ctx context.Context, a AttemptStart) context.Context {
	k.add(a)
	return ctx
}
func (k *keyWatcher) EndAttempt(_ context.Context, a AttemptEnd) { k.add(a) }

// A session key reaches no log line, no Observer field and no metric: the
// gateway keeps only its hash (GATEWAY §11.2), on success and on failure;
// nor does x-loopctl-session reach an upstream (the body's fields are the
// client's, and go on as sent).
func TestSessionKeyIsNeverLogged(t *testing.T) {
	up := llmtest.NewOpenAI(func(r llmtest.Request) llmtest.Reply {
		if r.Model == "down" {
			return llmtest.Error(500)
		}
		return llmtest.Text("ok")
	})
	t.Cleanup(up.Close)
	var logs bytes.Buffer
	obs := &keyWatcher{}
	srv := cloudGateway(t, Config{
		Upstreams: []Upstream{{Name: "up", BaseURL: up.BaseURL(), APIKey: "sk-up"}},
		Models: []Model{{Name: "m", Primary: "up/down", Chain: []string{"up/ok"}},
			{Name: "dead", Primary: "up/down"}},
	}, Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Observer: obs})
	keys := []string{"hdr-key-5f1e", "userid-key-9a2b", "cachekey-key-3c4d", "user-key-7e8f"}
	for _, model := range []string{"m", "dead"} {
		body := `{"model":"` + model + `","messages":[{"role":"user","content":"hi"}],"metadata":{"user_id":"` + keys[1] +
			`"},"prompt_cache_key":"` + keys[2] + `","user":"` + keys[3] + `"}`
		postTo(t, srv, "/v1/chat/completions", body, "x-loopctl-session", keys[0])
		postTo(t, srv, "/v1/messages", body, "x-loopctl-session", keys[0])
	}
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	obs.mu.Lock()
	seen := obs.out.String()
	obs.mu.Unlock()
	if !strings.Contains(logs.String(), `"model":"m"`) || !strings.Contains(seen, "up/ok") {
		t.Fatalf("the log and the Observer saw nothing: %s\n%s", logs.String(), seen)
	}
	for _, r := range up.Requests() {
		if v := r.Header.Get(sessionHeader); v != "" {
			t.Errorf("the upstream got %s: %q: the header is the gateway's", sessionHeader, v)
		}
	}
	for _, k := range keys {
		for where, text := range map[string]string{"the log": logs.String(), "the Observer": seen, "/metrics": string(metrics)} {
			if strings.Contains(text, k) {
				t.Errorf("%s holds the session key %q:\n%s", where, k, text)
			}
		}
	}
}

// The session of a request: one SHA-256 of the key, and no allocation
// when there is none.
func BenchmarkSessionOf(b *testing.B) {
	for _, bc := range []struct{ name, header, body string }{
		{"none", "", `{"model":"gpt-4.1","messages":[]}`},
		{"header", "conv-0b6c4d2e-1a2b-4c3d", `{"model":"gpt-4.1","messages":[]}`},
		{"claude-code", "", claudeCodeBody(20)},
	} {
		q, err := scan([]byte(bc.body))
		if err != nil {
			b.Fatal(err)
		}
		h := http.Header{}
		if bc.header != "" {
			h.Set(sessionHeader, bc.header)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = sessionOf(h, &q)
			}
		})
	}
}
