package transport_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/transport"
)

// slowBody is a body whose first read waits first.
type slowBody struct {
	first time.Duration
	r     io.Reader
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.first > 0 {
		time.Sleep(b.first)
		b.first = 0
	}
	return b.r.Read(p)
}
func (b *slowBody) Close() error { return nil }

// TestSlowFirstContent (SEMANTICS §8.2): a response is reported to its key's
// breaker with its time to first content, from the request's start to the
// first bytes of its body (a body-less response: its headers), so that the
// slow-call rule trips the key: headers at once and a first chunk after 2 s
// is slow; a body whose first chunk comes at once is not, however long the
// rest takes.
func TestSlowFirstContent(t *testing.T) {
	for _, tc := range []struct {
		name          string
		head, first   time.Duration
		rest          time.Duration
		noBody, trips bool
	}{
		{name: "first chunk after 2s", first: 2 * time.Second, trips: true},
		{name: "headers after 2s", head: 2 * time.Second, trips: true},
		{name: "body-less after 2s", head: 2 * time.Second, noBody: true, trips: true},
		{name: "first chunk at once, the rest later", rest: 5 * time.Second},
		{name: "fast", trips: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base := rtFunc(func(r *http.Request) (*http.Response, error) {
					time.Sleep(tc.head)
					resp := &http.Response{StatusCode: 200, Header: http.Header{}, Request: r, ContentLength: -1,
						Body: io.NopCloser(io.MultiReader(strings.NewReader("data: a\n"),
							&slowBody{first: tc.rest, r: strings.NewReader("data: b\n")}))}
					if tc.first > 0 {
						resp.Body = &slowBody{first: tc.first, r: strings.NewReader("data: a\n")}
					}
					if tc.noBody {
						resp.Body = http.NoBody
					}
					return resp, nil
				})
				rt := newRT(t, transport.Settings{Base: base, Retry: fast, Breaker: breaker.Settings{
					SlowCallAfter: time.Second, SlowCallRate: 0.5, RateMinCalls: 2}})
				for range 2 {
					req, _ := http.NewRequest(http.MethodGet, "http://llm.example/v1", nil)
					resp, err := rt.RoundTrip(req)
					if err != nil {
						t.Fatal(err)
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				if st := rt.Registry().Breaker("llm.example").State(); (st == breaker.Open) != tc.trips {
					t.Fatalf("state %v, want tripped %v", st, tc.trips)
				}
			})
		})
	}
}
