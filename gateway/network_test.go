package gateway

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/loopctl/loopctl-go/llmtest"
)

// connCounter counts an upstream server's open connections.
type connCounter struct {
	mu   sync.Mutex
	open map[net.Conn]bool
}

func (c *connCounter) track(conn net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s {
	case http.StateNew:
		c.open[conn] = true
	case http.StateClosed, http.StateHijacked:
		delete(c.open, conn)
	}
}

func (c *connCounter) n() int { c.mu.Lock(); defer c.mu.Unlock(); return len(c.open) }

// netFixture is a gateway on a loopback socket in front of a scripted
// upstream on another, counting the upstream's connections; its cleanup
// fails the test if any upstream connection is left open.
type netFixture struct {
	up    *llmtest.Handler
	gw    *Gateway
	srv   *httptest.Server
	conns *connCounter
}

func newNetFixture(t *testing.T, script llmtest.Script, cfg Config) *netFixture {
	t.Helper()
	up := llmtest.NewOpenAIHandler(script)
	cc := &connCounter{open: map[net.Conn]bool{}}
	us := httptest.NewUnstartedServer(up)
	us.Config.ConnState = cc.track
	us.Start()
	cfg.Upstreams = []Upstream{{Name: "up", BaseURL: us.URL + "/v1", APIKey: "sk-upstream"}}
	gw, err := New(cfg, Options{Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(func() {
		srv.Close()
		up.Release()
		gw.Close()
		deadline := time.Now().Add(5 * time.Second)
		for cc.n() > 0 && time.Now().Before(deadline) {
			gw.Close()
			time.Sleep(5 * time.Millisecond)
		}
		if n := cc.n(); n > 0 {
			t.Errorf("%d upstream connections left open", n)
		}
		us.Close()
	})
	return &netFixture{up: up, gw: gw, srv: srv, conns: cc}
}

func (f *netFixture) client() openai.Client {
	return openai.NewClient(option.WithBaseURL(f.srv.URL+"/v1"), option.WithAPIKey("sk-client"), option.WithMaxRetries(0),
		option.WithHTTPClient(f.srv.Client()))
}

func params(model string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}
}

// The official Go client, through the gateway, while the primary fails.
func TestOpenAIGoClient(t *testing.T) {
	f := newNetFixture(t, llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Reset()),
		"b": llmtest.Always(llmtest.Chunked("from ", "b")),
	}), chain())
	c := f.client()
	ctx := context.Background()

	comp, err := c.Chat.Completions.New(ctx, params("smart"))
	if err != nil || comp.Choices[0].Message.Content != "from b" {
		t.Fatalf("non-streaming: %v %+v", err, comp)
	}
	s := c.Chat.Completions.NewStreaming(ctx, params("smart"))
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil || acc.Choices[0].Message.Content != "from b" {
		t.Fatalf("streaming: %v %q", err, acc.Choices[0].Message.Content)
	}
	_ = s.Close()

	models, err := c.Models.List(ctx)
	if err != nil || len(models.Data) != 1 || models.Data[0].ID != "smart" {
		t.Fatalf("models: %v %+v", err, models)
	}
	// The direct form, with its own breaker.
	comp, err = c.Chat.Completions.New(ctx, params("up/b"))
	if err != nil || comp.Choices[0].Message.Content != "from b" {
		t.Fatalf("direct: %v", err)
	}
	if _, ok := managers(f.gw)["up/b"]; !ok {
		t.Error("no breaker for up/b")
	}
	// Unknown model: a 404 APIError with code model_not_found.
	_, err = c.Chat.Completions.New(ctx, params("nope"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 404 || apiErr.Code != "model_not_found" {
		t.Fatalf("unknown model: %v", err)
	}
	f.srv.Client().CloseIdleConnections()
}

// When every model fails the Go client gets an APIError it can act on.
func TestOpenAIGoClientAllFail(t *testing.T) {
	f := newNetFixture(t, llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Error(500)),
		"b": llmtest.Always(llmtest.Malformed()),
		"c": llmtest.Always(llmtest.Reset()),
	}), chain())
	c := f.client()
	_, err := c.Chat.Completions.New(context.Background(), params("smart"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 502 || apiErr.Type != "upstream_error" {
		t.Fatalf("all fail: %v", err)
	}
	_, err = c.Chat.Completions.New(context.Background(), params("smart"))
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 || apiErr.Code != "fallback_exhausted" || apiErr.Response.Header.Get("Retry-After") != "60" {
		t.Fatalf("exhausted: %v", err)
	}
	f.srv.Client().CloseIdleConnections()
}

// An upstream that hangs is cut by timeouts.first_byte and the request
// fails over; the hung connection is not leaked.
func TestHangingUpstream(t *testing.T) {
	cfg := chain()
	cfg.Timeouts.FirstByte = 20 * time.Millisecond
	cfg.Retry.MaxRetries = -1
	f := newNetFixture(t, llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Hang()),
		"b": llmtest.Always(llmtest.Text("from b")),
	}), cfg)
	res, err := f.srv.Client().Post(f.srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(chatBody("smart", false)))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.Header.Get("X-Loopctl-Model") != "up/b" {
		t.Fatalf("%d %v", res.StatusCode, res.Header)
	}
	f.srv.Client().CloseIdleConnections()
}

// A streaming request whose upstream resets mid-stream, after content,
// ends with an error event; nothing leaks.
func TestStreamResetAfterContent(t *testing.T) {
	f := newNetFixture(t, llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Streamed(llmtest.StreamReset, 2, "first ", "BROKEN")),
	}), chain())
	c := f.client()
	s := c.Chat.Completions.NewStreaming(context.Background(), params("smart"))
	var got string
	for s.Next() {
		for _, ch := range s.Current().Choices {
			got += ch.Delta.Content
		}
	}
	if s.Err() == nil || got != "first " {
		t.Fatalf("content %q, err %v", got, s.Err())
	}
	_ = s.Close()
	f.srv.Client().CloseIdleConnections()
}
