package transport_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/goleak"

	"github.com/loopctl/loopctl-go/retry"
	"github.com/loopctl/loopctl-go/transport"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fast is a ladder with the default budgets whose waits are a nanosecond,
// so that tests on real servers never sleep.
var fast = retry.Policy{BaseDelay: 1, MaxDelay: 1, RateLimitDelay: 1, MaxRateLimitDelay: 1}

// newRT returns a RoundTripper for s, failing the test on an error.
func newRT(t testing.TB, s transport.Settings) *transport.RoundTripper {
	t.Helper()
	rt, err := transport.New(s)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// handlerRT serves requests in process with a handler, so that tests in a
// synctest bubble block only on things the bubble can see (no sockets).
type handlerRT struct{ h http.Handler }

func (t handlerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	if r.Body != nil {
		r.Body.Close()
	}
	return rec.Result(), nil
}

// rtFunc is a RoundTripper from a function.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// hang is an upstream that never answers: it returns when the request's
// context ends.
var hang = rtFunc(func(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	return nil, r.Context().Err()
})
