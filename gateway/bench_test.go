package gateway

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
)

// The breaker part of a request's path (Begin, the target lookup, the
// settlement) does not allocate.
func BenchmarkBreakerPath(b *testing.B) {
	cfgUp := Config{Upstreams: []Upstream{{Name: "up", BaseURL: "http://x"}}, Models: chain().Models}
	g, err := New(cfgUp, Options{})
	if err != nil {
		b.Fatal(err)
	}
	rt := g.models["smart"]
	b.ReportAllocs()
	for b.Loop() {
		t, err := rt.begin(nil)
		if err != nil || rt.targets[t.Model()] == nil {
			b.Fatal(err)
		}
		t.Success()
	}
}

const benchAnswer = `{"id":"x","object":"chat.completion","created":1,"model":"a","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`

// BenchmarkProxies sends the same request sequentially over loopback
// directly, through a bare httputil.ReverseProxy and through the gateway;
// the differences of ns/op are the added latency.
func BenchmarkProxies(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, benchAnswer)
	}))
	defer up.Close()
	u, _ := url.Parse(up.URL)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = newTransport()
	rps := httptest.NewServer(rp)
	defer rps.Close()
	g, err := New(Config{Upstreams: []Upstream{{Name: "up", BaseURL: up.URL + "/v1"}}, Models: chain().Models}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	gws := httptest.NewServer(g)
	defer gws.Close()
	body := []byte(chatBody("smart", false))
	client := &http.Client{Transport: newTransport()}
	for _, tc := range []struct{ name, url string }{
		{"direct", up.URL},
		{"reverseproxy", rps.URL},
		{"gateway", gws.URL},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				res, err := client.Post(tc.url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					b.Fatal(res.StatusCode)
				}
			}
		})
	}
}

// cannedTransport answers every request with one fixed chat completion, in
// memory and without allocating (one response reused: the benchmark is
// sequential): the upstream of BenchmarkHandler, so that its allocs/op are
// the gateway's own.
type cannedTransport struct {
	resp http.Response
	body replayBody
	hdr  http.Header
}

func newCanned(answer string) *cannedTransport {
	c := &cannedTransport{body: replayBody{b: []byte(answer)}, hdr: http.Header{"Content-Type": {"application/json"}}}
	return c
}

func (c *cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	_, _ = io.Copy(io.Discard, r.Body)
	_ = r.Body.Close()
	c.body.reset()
	c.resp = http.Response{StatusCode: http.StatusOK, ProtoMajor: 1, ProtoMinor: 1, Request: r,
		Header: c.hdr, ContentLength: int64(len(c.body.b)), Body: &c.body}
	return &c.resp, nil
}

// replayBody is a request body that can be read again after Reset.
type replayBody struct {
	bytes.Reader
	b []byte
}

func (p *replayBody) Close() error { return nil }
func (p *replayBody) reset()       { p.Reset(p.b) }

// discardWriter is a reusable ResponseWriter that keeps the status only.
type discardWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// BenchmarkHandler is the gateway's own cost of one non-streaming chat
// request: ServeHTTP from the client's request to the answer written, with
// the upstream in memory (cannedTransport) and the request and writer
// reused, so that allocs/op counts the gateway's allocations alone (routing,
// the breaker, the retry ladder, the upstream request, headers, metrics and
// the request log, which is discarded). bench/gateway.sh reports its
// allocs/op in its summary line.
func BenchmarkHandler(b *testing.B) { benchHandler(b, Options{}) }

// benchHandler is BenchmarkHandler's loop for a gateway built with opt on
// the in-memory upstream.
func benchHandler(b *testing.B, opt Options) {
	opt.Transport = newCanned(benchAnswer)
	g, err := New(Config{Upstreams: []Upstream{{Name: "up", BaseURL: "http://upstream.test/v1"}}, Models: chain().Models},
		opt)
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	body := &replayBody{b: []byte(chatBody("smart", false))}
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", body)
	req.Header.Set("Content-Type", "application/json")
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		body.reset()
		clear(w.h)
		g.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			b.Fatal(w.code)
		}
	}
}
