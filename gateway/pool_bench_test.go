package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkHandlerPool is BenchmarkHandler for a model on a pool of three
// members next to a model of one entry, on the same in-memory upstream:
// the difference of ns/op and allocs/op is what a pool attempt adds to
// the gateway's own cost (the choice, the member attempt's settlement,
// the pool's verdict).
func BenchmarkHandlerPool(b *testing.B) {
	cfg := Config{
		Upstreams: []Upstream{{Name: "up", BaseURL: "http://upstream.test/v1"}, {Name: "up2", BaseURL: "http://upstream.test/v1"},
			{Name: "up3", BaseURL: "http://upstream.test/v1"}},
		Pools:  []Pool{{Name: "p", Members: []PoolMember{{Target: "up/a"}, {Target: "up2/a"}, {Target: "up3/a"}}}},
		Models: []Model{{Name: "one", Primary: "up/a"}, {Name: "pooled", Primary: "pool/p"}},
	}
	g, err := New(cfg, Options{Transport: newCanned(benchAnswer)})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	for _, model := range []string{"one", "pooled"} {
		b.Run(model, func(b *testing.B) {
			body := &replayBody{b: []byte(chatBody(model, false))}
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
		})
	}
}
