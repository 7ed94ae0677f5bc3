package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestHealthcheck: exit 0 only for a 200 from /readyz; 1 for any other
// status, a refused connection or no answer within 2 s; 2 for a bad flag.
func TestHealthcheck(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ready", "/readyz":
			_, _ = w.Write([]byte("ready\n"))
		case "/draining":
			http.Error(w, "not ready: draining", http.StatusServiceUnavailable)
		case "/hang":
			<-hang
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	defer close(hang) // before the server closes: the hanging handler returns
	for _, tc := range []struct {
		name, url string
		code      int
	}{
		{"ready", srv.URL + "/ready", ExitOK},
		{"base url", srv.URL, ExitOK},
		{"base url with a slash", srv.URL + "/", ExitOK},
		{"draining", srv.URL + "/draining", ExitFailure},
		{"down", "http://" + freeAddr(t) + "/readyz", ExitFailure},
		{"no answer", srv.URL + "/hang", ExitFailure},
		{"bad url", "::", ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			t0 := time.Now()
			code := Main([]string{"healthcheck", "--url", tc.url}, &out, &errb)
			if took := time.Since(t0); code != tc.code || took > healthcheckTimeout+500*time.Millisecond {
				t.Fatalf("exit %d after %v (%s), want %d within 2s", code, took, errb.String(), tc.code)
			}
		})
	}
}
