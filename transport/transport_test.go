package transport_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/retry"
	"github.com/loopctl/loopctl-go/transport"
)

// TestVerdictByStatus sends one request per status class through a fresh
// RoundTripper and checks the attempts the ladder made, the status the caller
// got and the verdict the host's breaker recorded (SEMANTICS rev 2, §4).
func TestVerdictByStatus(t *testing.T) {
	const (
		success = iota
		failure
		none
	)
	tests := []struct {
		code, attempts, verdict int
	}{
		{200, 1, success},
		{201, 1, success},
		{204, 1, success},
		{304, 1, success},
		{400, 1, none},
		{413, 1, none},
		{422, 1, none},
		{401, 1, failure},
		{403, 1, failure},
		{404, 1, failure},
		{409, 1, failure},
		{408, 4, failure},
		{429, 4, failure},
		{500, 4, failure},
		{502, 4, failure},
		{503, 4, failure},
		{504, 4, failure},
		{529, 4, failure},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.code), func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				w.WriteHeader(tt.code)
				if tt.code != 204 && tt.code != 304 {
					io.WriteString(w, `{"status":"`+http.StatusText(tt.code)+`"}`)
				}
			}))
			defer srv.Close()
			rt := newRT(t, transport.Settings{Retry: fast})
			c := &http.Client{Transport: rt}
			res, err := c.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tt.code {
				t.Errorf("status %d, want %d", res.StatusCode, tt.code)
			}
			if tt.code >= 400 && !strings.Contains(string(b), http.StatusText(tt.code)) {
				t.Errorf("body %q: the upstream's error body did not reach the caller", b)
			}
			if got := int(n.Load()); got != tt.attempts {
				t.Errorf("%d attempts, want %d", got, tt.attempts)
			}
			st := rt.Registry().Stats(strings.TrimPrefix(srv.URL, "http://"))
			want := health.Stats{}
			switch tt.verdict {
			case success:
				want.Calls, want.Successes = 1, 1
			case failure:
				want.Calls, want.Failures = 1, 1
			}
			if st.Calls != want.Calls || st.Successes != want.Successes || st.Failures != want.Failures {
				t.Errorf("stats %+v, want calls %d successes %d failures %d", st, want.Calls, want.Successes, want.Failures)
			}
		})
	}
}

// TestNoResponse: a connection error is a failure, retried by the ladder; the
// caller's cancellation is no verdict.
func TestNoResponse(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	rt := newRT(t, transport.Settings{Retry: fast})
	key := strings.TrimPrefix(url, "http://")
	_, err := (&http.Client{Transport: rt}).Get(url)
	if err == nil {
		t.Fatal("no error from a closed server")
	}
	if st := rt.Registry().Stats(key); st.Failures != 1 {
		t.Errorf("stats %+v, want one failure", st)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	if _, err := rt.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if st := rt.Registry().Stats(key); st.Calls != 1 {
		t.Errorf("stats %+v: a cancelled request was counted", st)
	}
}

// TestRefusal trips a host's breaker and checks that the next request is
// refused without reaching the network, with a typed error usable through
// the *url.Error of an http.Client.
func TestRefusal(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	var changes []string
	rt := newRT(t, transport.Settings{
		Retry: retry.Policy{MaxRetries: -1},
		Breaker: breaker.Settings{OnStateChange: func(name string, from, to breaker.State) {
			changes = append(changes, name+" "+from.String()+"->"+to.String())
		}},
	})
	c := &http.Client{Transport: rt}
	for range 3 {
		res, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	_, err := c.Post(srv.URL, "text/plain", strings.NewReader("x"))
	if !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("err %v, want breaker.ErrOpen", err)
	}
	oe, ok := errors.AsType[*transport.OpenError](err)
	if !ok {
		t.Fatalf("err %T %v: no *transport.OpenError", err, err)
	}
	key := strings.TrimPrefix(srv.URL, "http://")
	if oe.Key != key || oe.RetryIn() <= 0 || oe.RetryIn() > breaker.DefaultRecoveryDuration {
		t.Errorf("refusal %+v (retry in %v)", oe, oe.RetryIn())
	}
	if _, ok := errors.AsType[*breaker.OpenError](err); !ok {
		t.Error("errors.As finds no *breaker.OpenError")
	}
	if !strings.HasPrefix(oe.Error(), `transport: circuit breaker open for "`+key+`"; next probe in `) {
		t.Errorf("text %q", oe.Error())
	}
	if got := n.Load(); got != 3 {
		t.Errorf("%d requests reached the server, want 3", got)
	}
	if want := key + " closed->open"; len(changes) != 1 || changes[0] != want {
		t.Errorf("changes %q, want [%q]", changes, want)
	}
}

// TestKey: a key function splits one host into several breakers.
func TestKey(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Model") == "bad" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	rt := newRT(t, transport.Settings{
		Retry: retry.Policy{MaxRetries: -1},
		Key:   func(r *http.Request) string { return r.URL.Host + " " + r.Header.Get("X-Model") },
	})
	get := func(model string) error {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		req.Header.Set("X-Model", model)
		res, err := rt.RoundTrip(req)
		if err == nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		return err
	}
	for range 3 {
		if err := get("bad"); err != nil {
			t.Fatal(err)
		}
	}
	if err := get("bad"); !errors.Is(err, breaker.ErrOpen) {
		t.Errorf("bad model: err %v, want a refusal", err)
	}
	if err := get("good"); err != nil {
		t.Errorf("good model on the same host: %v", err)
	}
}

// TestBodyReplay: a retried request sends the same body again (GetBody); a
// body that cannot be replayed is sent once.
func TestBodyReplay(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if len(bodies) < 3 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	rt := newRT(t, transport.Settings{Retry: fast})

	req, _ := http.NewRequest("POST", srv.URL, bytes.NewReader([]byte(`{"model":"m"}`)))
	res, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(b) != "ok" {
		t.Errorf("got %d %q, want 200 ok", res.StatusCode, b)
	}
	if want := []string{`{"model":"m"}`, `{"model":"m"}`, `{"model":"m"}`}; strings.Join(bodies, "|") != strings.Join(want, "|") {
		t.Errorf("bodies %q, want %q", bodies, want)
	}

	bodies = nil
	req, _ = http.NewRequest("POST", srv.URL, io.NopCloser(strings.NewReader("once"))) // no GetBody
	res, err = rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadGateway || len(bodies) != 1 || bodies[0] != "once" {
		t.Errorf("got %d after %q, want one attempt answered 502", res.StatusCode, bodies)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		s     transport.Settings
		field string
	}{
		{transport.Settings{Breaker: breaker.Settings{FailureThreshold: -1}}, "FailureThreshold"},
		{transport.Settings{Breaker: breaker.Settings{ProbeTimeout: -1}}, "ProbeTimeout"},
		{transport.Settings{Retry: retry.Policy{BaseDelay: -1}}, "BaseDelay"},
		{transport.Settings{Retry: retry.Policy{RateLimitRetries: -1}}, "RateLimitRetries"},
	}
	for _, tt := range tests {
		_, err := transport.New(tt.s)
		if err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("New(%+v): err %v, want one naming %s", tt.s, err, tt.field)
		}
	}
}
