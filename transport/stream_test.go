package transport_test

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/retry"
	"github.com/loopctl/loopctl-go/transport"
)

// streamServer sends "data: one\n\n", flushes, waits for next (or the
// request's end), then sends "data: two\n\n" (or, with cut, drops the
// connection mid-stream instead).
func streamServer(next <-chan struct{}, cut bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-next:
		case <-r.Context().Done():
			return
		}
		if cut {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		io.WriteString(w, "data: two\n\n")
	}))
}

// TestStreamUnbuffered: the first chunk of a stream reaches the caller before
// the upstream sends the second; the verdict is taken from how the body ends.
func TestStreamUnbuffered(t *testing.T) {
	tests := []struct {
		name                       string
		cut                        bool // the upstream drops the connection after the first chunk
		closeEarly                 bool // the caller closes after the first chunk
		calls, successes, failures uint64
	}{
		{name: "eof", calls: 1, successes: 1},
		{name: "cut", cut: true, calls: 1, failures: 1},
		{name: "caller-closes", closeEarly: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := make(chan struct{})
			srv := streamServer(next, tt.cut)
			defer srv.Close()
			rt := newRT(t, transport.Settings{Retry: retry.Policy{MaxRetries: -1}})
			res, err := (&http.Client{Transport: rt}).Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(res.Body)
			line, err := br.ReadString('\n')
			if err != nil || line != "data: one\n" {
				t.Fatalf("first line %q, %v", line, err)
			}
			// Only now may the upstream send the rest: a buffering
			// middleware would never have delivered the first chunk.
			close(next)
			key := strings.TrimPrefix(srv.URL, "http://")
			if tt.closeEarly {
				res.Body.Close()
			} else {
				rest, err := io.ReadAll(br)
				res.Body.Close()
				if tt.cut != (err != nil) {
					t.Fatalf("rest %q, err %v", rest, err)
				}
				if !tt.cut && string(rest) != "\ndata: two\n\n" {
					t.Errorf("rest %q", rest)
				}
			}
			st := rt.Registry().Stats(key)
			if st.Calls != tt.calls || st.Successes != tt.successes || st.Failures != tt.failures {
				t.Errorf("stats %+v, want calls %d successes %d failures %d", st, tt.calls, tt.successes, tt.failures)
			}
		})
	}
}

// TestStreamProbe: a probe's success is counted at the end of its body, so a
// stream that dies before its end re-opens the breaker.
func TestStreamProbe(t *testing.T) {
	now := time.Unix(1e9, 0)
	var failing atomic.Bool
	failing.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(500)
			return
		}
		io.WriteString(w, "data: one\n\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "data: two\n\n")
	}))
	defer srv.Close()
	rt := newRT(t, transport.Settings{
		Retry:   retry.Policy{MaxRetries: -1},
		Breaker: breaker.Settings{FailureThreshold: 1, Now: func() time.Time { return now }},
	})
	c := &http.Client{Transport: rt}
	key := strings.TrimPrefix(srv.URL, "http://")
	state := func() breaker.State { return rt.Registry().Breaker(key).State() }
	res, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if state() != breaker.Open {
		t.Fatalf("state %v after a 500 with threshold 1", state())
	}
	failing.Store(false)
	now = now.Add(breaker.DefaultRecoveryDuration)
	res, err = c.Get(srv.URL) // the probe
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(srv.URL); !errors.Is(err, breaker.ErrOpen) {
		t.Errorf("second request during the probe: %v, want a refusal", err)
	}
	if state() != breaker.HalfOpen {
		t.Errorf("state %v with the probe's body unread, want half-open", state())
	}
	io.ReadAll(res.Body)
	res.Body.Close()
	if state() != breaker.Closed {
		t.Errorf("state %v after the probe's body ended, want closed", state())
	}
}
