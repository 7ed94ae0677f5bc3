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
