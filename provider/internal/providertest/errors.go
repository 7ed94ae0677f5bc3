package providertest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/retry"
)

// Now is the fixed clock [TestErrors] gives the adapter, so that cases
// with a Retry-After HTTP-date can be written relative to it.
func Now() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

// ErrorCase is one failing reply and how the adapter must report it.
type ErrorCase struct {
	// Name names the subtest.
	Name string
	// Reply is what the fake server sends.
	Reply llmtest.Reply
	// Code is the wanted retry.StatusError code; 0: the error must not be
	// a *retry.StatusError.
	Code int
	// RetryAfter is the wanted StatusError.RetryAfter (with Code != 0).
	RetryAfter time.Duration
	// Limit is the wanted StatusError.Limit (with Code != 0).
	Limit retry.Limit
	// Hint is the wanted StatusError.Hint as a wait from [Now] (with Code
	// != 0); 0: RetryAfter (and with both 0, no hint: the zero Time).
	Hint time.Duration
	// Class is the wanted retry.Classify result.
	Class retry.Class
	// Bad states whether the error wraps Harness.BadResponse.
	Bad bool
	// Text lists what the error's text must contain (the provider's own
	// message, code and type, for instance). nil: not checked.
	Text []string
}

// errorCases are the cases every adapter shares.
var errorCases = []ErrorCase{
	{Name: "500", Reply: llmtest.Error(500), Code: 500, Class: retry.Transient},
	{Name: "429 Retry-After seconds", Reply: llmtest.RateLimit("7"), Code: 429, RetryAfter: 7 * time.Second, Limit: retry.Throttle, Class: retry.RateLimited},
	{Name: "429 no hint", Reply: llmtest.RateLimit(""), Code: 429, Limit: retry.Throttle, Class: retry.RateLimited},
	{Name: "400", Reply: llmtest.Reply{Fault: &llmtest.Fault{Status: 400, Message: "messages: too long"}}, Code: 400, Class: retry.Permanent,
		Text: []string{"retry: HTTP 400 Bad Request: messages: too long (", "type invalid_request_error"}},
	{Name: "401", Reply: llmtest.Reply{Fault: &llmtest.Fault{Status: 401, Message: "bad key"}}, Code: 401, Class: retry.Permanent,
		Text: []string{"retry: HTTP 401 Unauthorized: bad key"}},
	{Name: "malformed JSON", Reply: llmtest.Malformed(), Class: retry.Transient, Bad: true},
	{Name: "empty body", Reply: llmtest.Raw(200, ""), Class: retry.Transient, Bad: true},
}

// TestErrors runs the shared error cases, then extra, each as a subtest
// against a server that always sends the case's reply, with the adapter's
// clock at [Now]. Complete must fail after exactly one HTTP request (the
// SDK's own retries are off) with an error of the case's class, code,
// Retry-After and bad-response status.
func TestErrors(t *testing.T, h Harness, extra ...ErrorCase) {
	h.check(t)
	cases := append(append([]ErrorCase(nil), errorCases...), extra...)
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			srv := h.NewServer(llmtest.Always(tt.Reply))
			defer srv.Close()
			p := h.NewProvider(t, srv.BaseURL(), Now)
			_, err := p.Complete(context.Background(), UserRequest("m"))
			if err == nil {
				t.Fatal("no error")
			}
			if n := srv.Count(""); n != 1 {
				t.Errorf("%d HTTP requests, want exactly 1 (SDK retries must be off)", n)
			}
			if c := retry.Classify(err); c != tt.Class {
				t.Errorf("Classify = %v, want %v (err: %v)", c, tt.Class, err)
			}
			for _, want := range tt.Text {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error text %q lacks %q", err, want)
				}
			}
			if got := errors.Is(err, h.BadResponse); got != tt.Bad {
				t.Errorf("errors.Is(err, ErrBadResponse) = %v, want %v (err: %v)", got, tt.Bad, err)
			}
			var se *retry.StatusError
			if !errors.As(err, &se) {
				if tt.Code != 0 {
					t.Fatalf("not a StatusError: %v", err)
				}
				return
			}
			if se.Code != tt.Code || se.RetryAfter != tt.RetryAfter {
				t.Errorf("StatusError{Code: %d, RetryAfter: %v}, want {%d, %v}", se.Code, se.RetryAfter, tt.Code, tt.RetryAfter)
			}
			var wantHint time.Time
			if d := max(tt.Hint, tt.RetryAfter); d > 0 {
				wantHint = Now().Add(d)
			}
			if se.Limit != tt.Limit || !se.Hint.Equal(wantHint) {
				t.Errorf("StatusError{Limit: %v, Hint: %v}, want {%v, %v}", se.Limit, se.Hint, tt.Limit, wantHint)
			}
		})
	}
}

// manualCtx is a context whose deadline "passes" when expire is called, so
// a test can cut a hanging request without waiting for a clock.
type manualCtx struct {
	context.Context
	done chan struct{}
	once sync.Once
	err  error
}

func newManualCtx(err error) *manualCtx {
	return &manualCtx{Context: context.Background(), done: make(chan struct{}), err: err}
}
func (c *manualCtx) expire() { c.once.Do(func() { close(c.done) }) }
func (c *manualCtx) Deadline() (time.Time, bool) {
	return time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), c.err == context.DeadlineExceeded
}
func (c *manualCtx) Done() <-chan struct{} { return c.done }
func (c *manualCtx) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// TestContextEnds checks, for a deadline and for a cancellation (one
// subtest each), that a context ending while the server hangs makes
// Complete return an error that errors.Is the context's error, after one
// request. No clock is involved: the server ends the context itself.
func TestContextEnds(t *testing.T, h Harness) {
	h.check(t)
	for _, want := range []error{context.DeadlineExceeded, context.Canceled} {
		t.Run(want.Error(), func(t *testing.T) {
			ctx := newManualCtx(want)
			srv := h.NewServer(func(llmtest.Request) llmtest.Reply {
				ctx.expire() // the deadline passes while the server hangs
				return llmtest.Hang()
			})
			defer srv.Close()
			_, err := h.NewProvider(t, srv.BaseURL(), nil).Complete(ctx, UserRequest("m"))
			if !errors.Is(err, want) {
				t.Fatalf("err = %v, want errors.Is %v", err, want)
			}
			if srv.Count("") != 1 {
				t.Errorf("%d requests, want 1", srv.Count(""))
			}
		})
	}
}

// TestRealDeadline checks the whole stack with one genuine 20ms
// context.WithTimeout against a server that hangs: the error must be
// context.DeadlineExceeded. Nothing sleeps; the server hangs until the
// client gives up.
func TestRealDeadline(t *testing.T, h Harness) {
	h.check(t)
	srv := h.NewServer(llmtest.Always(llmtest.Hang()))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := h.NewProvider(t, srv.BaseURL(), nil).Complete(ctx, UserRequest("m"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
}

// TestConnectionError checks that a request to a closed loopback port
// fails with a transient error that is neither a *retry.StatusError nor
// Harness.BadResponse.
func TestConnectionError(t *testing.T, h Harness) {
	h.check(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens any more
	_, err := h.NewProvider(t, url, nil).Complete(context.Background(), UserRequest("m"))
	if err == nil {
		t.Fatal("no error")
	}
	var se *retry.StatusError
	if errors.As(err, &se) || errors.Is(err, h.BadResponse) {
		t.Errorf("connection error became %v", err)
	}
	if c := retry.Classify(err); c != retry.Transient {
		t.Errorf("Classify = %v, want transient", c)
	}
}

// TestBadRequests checks that invalid requests (shared ones: no model, an
// unknown role, a negative MaxTokens; then extra, keyed by name) fail with
// a permanent error before anything is sent.
func TestBadRequests(t *testing.T, h Harness, extra map[string]agent.Request) {
	h.check(t)
	srv := h.NewServer(llmtest.Always(llmtest.Text("ok")))
	defer srv.Close()
	p := h.NewProvider(t, srv.BaseURL(), nil)
	cases := map[string]agent.Request{
		"no model":       {Messages: []agent.Message{{Role: agent.RoleUser, Content: "x"}}},
		"unknown role":   {Model: "m", Messages: []agent.Message{{Role: "narrator"}}},
		"negative limit": {Model: "m", MaxTokens: -1},
	}
	for name, req := range extra {
		if _, dup := cases[name]; dup {
			t.Fatalf("extra bad request %q repeats a shared case", name)
		}
		cases[name] = req
	}
	for name, req := range cases {
		_, err := p.Complete(context.Background(), req)
		if retry.Classify(err) != retry.Permanent {
			t.Errorf("%s: err = %v, want a permanent error", name, err)
		}
	}
	if srv.Count("") != 0 {
		t.Errorf("%d requests sent, want 0", srv.Count(""))
	}
}
