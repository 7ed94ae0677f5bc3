package gateway

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// TestHaltEndsStreamsWithTheWireError: a stream still open when the server
// halts (its requests' contexts end with ErrHalted) ends with its client
// wire's error event, on every wire (Messages and Responses translated from
// chat here), and counts nothing against the model.
func TestHaltEndsStreamsWithTheWireError(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
		at               int // the upstream event the stream pauses at (after "first ")
		want             []string
	}{
		{"chat", "/v1/chat/completions", chatBody("m", true), 2, []string{`"code":"stream_interrupted"`}},
		{"messages", "/v1/messages", msgBody("m", true), 2, []string{"event: error", `"type":"api_error"`}},
		{"responses", "/v1/responses", rsBody("m", true, ""), 5, []string{"event: error", "event: response.failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resume := make(chan struct{})
			defer close(resume)
			rep := llmtest.Chunked("first ", "never")
			rep.StreamFault = &llmtest.StreamFault{At: tc.at, Kind: llmtest.StreamPause, Resume: resume}
			up := llmtest.NewOpenAI(llmtest.Always(rep))
			defer up.Close()
			g, err := New(Config{Upstreams: []Upstream{{Name: "up", BaseURL: up.BaseURL()}},
				Models: []Model{{Name: "m", Primary: "up/a", Chain: []string{"up/b"}}}, Timeouts: Timeouts{FirstByte: 5 * time.Second}}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			base, halt := context.WithCancelCause(context.Background())
			srv := httptest.NewUnstartedServer(g)
			srv.Config.BaseContext = func(net.Listener) context.Context { return base }
			srv.Start()
			defer srv.Close()
			res, err := http.Post(srv.URL+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			r := bufio.NewReader(res.Body)
			for { // up to the first content
				line, err := r.ReadString('\n')
				if err != nil {
					t.Fatalf("stream ended before its content: %v", err)
				}
				if strings.Contains(line, "first ") {
					break
				}
			}
			halt(ErrHalted)
			rest, _ := io.ReadAll(r)
			for _, w := range append(tc.want, "shutting down") {
				if !strings.Contains(string(rest), w) {
					t.Errorf("the end of the stream lacks %q:\n%s", w, rest)
				}
			}
			if s := g.models["m"].mgr.Snapshot(); s.State != fallback.Primary || s.ConsecutiveFailures != 0 {
				t.Errorf("the halt counted against the model: %+v", s)
			}
		})
	}
}

// TestHaltAnswersPendingRequests: a request still waiting for its upstream
// when the server halts gets a 503 shutting_down with Retry-After, and the
// halt counts nothing against the model.
func TestHaltAnswersPendingRequests(t *testing.T) {
	up := llmtest.NewOpenAI(llmtest.Always(llmtest.Hang()))
	defer up.Close()
	g, err := New(Config{Upstreams: []Upstream{{Name: "up", BaseURL: up.BaseURL()}},
		Models: []Model{{Name: "m", Primary: "up/a", Chain: []string{"up/b"}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	base, halt := context.WithCancelCause(context.Background())
	srv := httptest.NewUnstartedServer(g)
	srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	srv.Start()
	defer srv.Close()
	go func() {
		for up.Count("a") == 0 {
			time.Sleep(time.Millisecond)
		}
		halt(ErrHalted)
	}()
	res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(chatBody("m", false)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), `"code":"shutting_down"`) {
		t.Fatalf("%d %v %s", res.StatusCode, res.Header, body)
	}
	if s := g.models["m"].mgr.Snapshot(); s.State != fallback.Primary || s.ConsecutiveFailures != 0 {
		t.Errorf("the halt counted against the model: %+v", s)
	}
}
