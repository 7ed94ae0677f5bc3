package gateway

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// pipeTransport serves upstream requests with an http.Handler in the same
// process, over an io.Pipe: no sockets, so a test can run the gateway and
// its upstream inside a testing/synctest bubble with fake time.
type pipeTransport struct{ h http.Handler }

func (p pipeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr, pw := io.Pipe()
	w := &pipeWriter{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	go func() {
		defer func() {
			if v := recover(); v != nil && v != http.ErrAbortHandler {
				panic(v)
			}
			w.start(http.StatusOK)
			if w.aborted() {
				_ = pw.CloseWithError(io.ErrUnexpectedEOF)
			}
			_ = pw.Close()
		}()
		w.abort = true
		p.h.ServeHTTP(w, req)
		w.mu.Lock()
		w.abort = false
		w.mu.Unlock()
	}()
	select {
	case <-w.ready:
	case <-req.Context().Done():
		_ = pr.CloseWithError(req.Context().Err())
		return nil, req.Context().Err()
	}
	return &http.Response{StatusCode: w.status, Header: w.header, Body: &pipeBody{pr, req.Context()}, Request: req}, nil
}

// pipeBody ends a read with the request context's error once it ends.
type pipeBody struct {
	r   *io.PipeReader
	ctx context.Context
}

func (b *pipeBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && b.ctx.Err() != nil {
		return n, b.ctx.Err()
	}
	return n, err
}

func (b *pipeBody) Close() error { return b.r.CloseWithError(io.ErrClosedPipe) }

type pipeWriter struct {
	header http.Header
	pw     *io.PipeWriter
	ready  chan struct{}
	once   sync.Once
	status int
	mu     sync.Mutex
	abort  bool
}

func (w *pipeWriter) aborted() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.abort }

func (w *pipeWriter) Header() http.Header { return w.header }

func (w *pipeWriter) start(status int) {
	w.once.Do(func() {
		w.status = status
		w.header = w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeWriter) WriteHeader(status int) { w.start(status) }

func (w *pipeWriter) Write(b []byte) (int, error) {
	w.start(http.StatusOK)
	return w.pw.Write(b)
}

func (w *pipeWriter) Flush() {}

// bubble is a gateway in front of a scripted upstream over a pipeTransport,
// served without sockets; use it inside synctest.Test.
type bubble struct {
	t  *testing.T
	up *llmtest.Handler
	gw *Gateway
}

func newBubble(t *testing.T, script llmtest.Script, cfg Config, opt Options) *bubble {
	t.Helper()
	up := llmtest.NewOpenAIHandler(script)
	cfg.Upstreams = append([]Upstream{{Name: "up", BaseURL: "http://upstream.test/v1", APIKey: "sk-upstream"}}, cfg.Upstreams...)
	opt.Transport = pipeTransport{up}
	if opt.Rand == nil {
		opt.Rand = func() float64 { return 0 }
	}
	gw, err := New(cfg, opt)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(up.Release)
	return &bubble{t: t, up: up, gw: gw}
}

func (b *bubble) do(ctx context.Context, body string, hdr ...string) answer {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	b.gw.ServeHTTP(rec, req)
	return answer{rec.Code, rec.Header(), rec.Body.String()}
}

func (b *bubble) post(body string, hdr ...string) answer {
	return b.do(context.Background(), body, hdr...)
}

// elapsed runs f and returns how long it took on the bubble's clock.
func elapsed(f func()) time.Duration {
	t0 := time.Now()
	f()
	return time.Since(t0)
}
