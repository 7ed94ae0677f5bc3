package transport_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/retry"
	"github.com/loopctl/loopctl-go/transport"
)

// TestBodyEnd: a body read to its Content-Length and closed without
// reading io.EOF is a success; closed before that, a cancel; a body-less
// response is a success at once.
func TestBodyEnd(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "HEAD" {
			return
		}
		io.WriteString(w, "0123456789")
	}))
	defer srv.Close()
	key := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		name             string
		method           string
		read             int
		calls, successes uint64
	}{
		{"all-of-content-length", "GET", 10, 1, 1},
		{"part", "GET", 4, 0, 0},
		{"head", "HEAD", 0, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRT(t, transport.Settings{})
			req, _ := http.NewRequest(tt.method, srv.URL, nil)
			res, err := rt.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, tt.read)
			if _, err := io.ReadFull(res.Body, buf); err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			st := rt.Registry().Stats(key)
			if st.Calls != tt.calls || st.Successes != tt.successes {
				t.Errorf("stats %+v, want calls %d successes %d", st, tt.calls, tt.successes)
			}
		})
	}
}

// TestConcurrent sends requests from many goroutines through one
// RoundTripper to a host that fails every other request; every request ends
// with a response or a refusal, and every settled call is counted once.
func TestConcurrent(t *testing.T) {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		fail := n%2 == 0
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	rt := newRT(t, transport.Settings{Retry: retry.Policy{MaxRetries: -1}})
	c := &http.Client{Transport: rt}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				res, err := c.Get(srv.URL)
				if err != nil {
					if !errors.Is(err, breaker.ErrOpen) {
						t.Errorf("err %v, want only refusals", err)
					}
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	}
	wg.Wait()
	st := rt.Registry().Stats(strings.TrimPrefix(srv.URL, "http://"))
	mu.Lock()
	sent := n
	mu.Unlock()
	if st.Calls != uint64(sent) || st.Successes+st.Failures != st.Calls {
		t.Errorf("stats %+v for %d requests sent", st, sent)
	}
}
