package transport_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/loopctl/loopctl-go/transport"
)

// okResponse is a canned upstream: it answers every request with a small
// 200 body at once, so the benchmark measures the middleware alone.
type okResponse struct{}

func (okResponse) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode:    200,
		Body:          io.NopCloser(strings.NewReader(`{"ok":true}`)),
		ContentLength: 11,
		Request:       r,
	}, nil
}

// BenchmarkOverhead compares one request (gate, send, read the body to its
// end, close) through a bare RoundTripper and through transport over it,
// in process (the middleware's own cost) and over loopback HTTP.
func BenchmarkOverhead(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	loopback := srv.Client().Transport
	cases := []struct {
		name string
		base http.RoundTripper
		wrap bool
	}{
		{"inprocess/bare", okResponse{}, false},
		{"inprocess/transport", okResponse{}, true},
		{"loopback/bare", loopback, false},
		{"loopback/transport", loopback, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			rt := c.base
			if c.wrap {
				rt = newRT(b, transport.Settings{Base: c.base})
			}
			req, _ := http.NewRequest("GET", srv.URL, nil)
			buf := make([]byte, 64)
			b.ReportAllocs()
			for b.Loop() {
				res, err := rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				for {
					if _, err := res.Body.Read(buf); err != nil {
						break
					}
				}
				res.Body.Close()
			}
		})
	}
}
