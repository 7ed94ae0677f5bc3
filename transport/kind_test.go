package transport_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/retry"
	"github.com/loopctl/loopctl-go/transport"
)

const quotaBody = `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`

// scripted is an in-process upstream that answers each request with the next
// of its replies (the last one repeats) and records when each came.
type scripted struct {
	replies []func(w http.ResponseWriter)
	at      []time.Time
}

func (s *scripted) rt() http.RoundTripper {
	return handlerRT{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.at = append(s.at, time.Now())
		s.replies[min(len(s.at), len(s.replies))-1](w)
	})}
}

func reply(code int, body string, kv ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i < len(kv); i += 2 {
			w.Header().Set(kv[i], kv[i+1])
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// TestKinds: the ladder reads the kind of each error answer (headers and the
// body read ahead) and its hint: a quota is not retried, a throttle waits its
// hint (capped), an overload takes the transient backoff, Failover passes on
// the first rate limit; the caller still reads the last body whole.
func TestKinds(t *testing.T) {
	ok := reply(200, "ok")
	tests := []struct {
		name      string
		policy    retry.Policy
		replies   []func(http.ResponseWriter)
		wantCalls int
		wantWaits []time.Duration
		wantCode  int
		wantBody  string
	}{
		{"quota 429: no retry", retry.Policy{}, []func(http.ResponseWriter){reply(429, quotaBody, "Retry-After", "1"), ok},
			1, nil, 429, quotaBody},
		{"quota as a Google status: no retry", retry.Policy{}, []func(http.ResponseWriter){
			reply(429, `[{"error":{"code":429,"message":"Quota exceeded for metric x","status":"RESOURCE_EXHAUSTED"}}]`), ok},
			1, nil, 429, "RESOURCE_EXHAUSTED"},
		{"throttle waits the reset of the exhausted limit", retry.Policy{}, []func(http.ResponseWriter){
			reply(429, `{"error":{"type":"requests","code":"rate_limit_exceeded"}}`,
				"X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "1m30.5s",
				"X-Ratelimit-Remaining-Tokens", "10", "X-Ratelimit-Reset-Tokens", "20ms"), ok},
			2, []time.Duration{60 * time.Second}, 200, "ok"}, // capped at MaxRateLimitDelay
		{"throttle waits retry-after-ms", retry.Policy{}, []func(http.ResponseWriter){reply(429, "", "Retry-After-Ms", "1500"), ok},
			2, []time.Duration{1500 * time.Millisecond}, 200, "ok"},
		{"anthropic reset", retry.Policy{}, []func(http.ResponseWriter){reply(429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}`,
			"Anthropic-Ratelimit-Tokens-Remaining", "0", "Anthropic-Ratelimit-Tokens-Reset", "2000-01-01T00:00:09Z"), ok},
			2, []time.Duration{9 * time.Second}, 200, "ok"},
		{"overload: transient backoff", retry.Policy{Rand: func() float64 { return 0.5 }}, []func(http.ResponseWriter){
			reply(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`),
			reply(503, `{"error":{"message":"The engine is currently overloaded"}}`), ok},
			3, []time.Duration{50 * time.Millisecond, 100 * time.Millisecond}, 200, "ok"},
		{"failover: the first throttle passes at once", retry.Policy{Failover: true}, []func(http.ResponseWriter){reply(429, "busy", "Retry-After", "5"), ok},
			1, nil, 429, "busy"},
		{"failover: the first overload passes at once", retry.Policy{Failover: true}, []func(http.ResponseWriter){
			reply(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), ok},
			1, nil, 529, "overloaded_error"},
		{"failover: a fast 500 is retried", retry.Policy{Failover: true, Rand: func() float64 { return 0.5 }}, []func(http.ResponseWriter){reply(500, "x"), ok},
			2, []time.Duration{50 * time.Millisecond}, 200, "ok"},
		{"RateLimitWait: the wait past it passes", retry.Policy{RateLimitWait: 10 * time.Second}, []func(http.ResponseWriter){
			reply(429, "a", "Retry-After", "6"), reply(429, "b", "Retry-After", "6"), ok},
			2, []time.Duration{6 * time.Second}, 429, "b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				up := &scripted{replies: tt.replies}
				var waits []time.Duration
				tt.policy.OnRetry = func(a retry.Attempt) { waits = append(waits, a.Delay) }
				rt := newRT(t, transport.Settings{Base: up.rt(), Retry: tt.policy})
				req, _ := http.NewRequest("POST", "http://api.test/v1/chat/completions", strings.NewReader("{}"))
				res, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if len(up.at) != tt.wantCalls || res.StatusCode != tt.wantCode || !strings.Contains(string(b), tt.wantBody) {
					t.Errorf("%d calls, status %d, body %q; want %d, %d, %q", len(up.at), res.StatusCode, b, tt.wantCalls, tt.wantCode, tt.wantBody)
				}
				if tt.wantBody == quotaBody && string(b) != quotaBody {
					t.Errorf("body %q, want it byte for byte", b)
				}
				if len(waits) != len(tt.wantWaits) {
					t.Fatalf("waits %v, want %v", waits, tt.wantWaits)
				}
				for i := range waits {
					if waits[i] != tt.wantWaits[i] || up.at[i+1].Sub(up.at[i]) != tt.wantWaits[i] {
						t.Errorf("waits %v (calls at %v), want %v", waits, up.at, tt.wantWaits)
					}
				}
			})
		})
	}
}

// TestKindInError: when RoundTrip returns an error instead of a response
// (the caller's context ended during a rate-limit wait), the error carries
// the answer's kind and hint (retry.LimitOf).
func TestKindInError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := &scripted{replies: []func(http.ResponseWriter){reply(429, "", "Retry-After", "30")}}
		rt := newRT(t, transport.Settings{Base: up.rt()})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://api.test/", nil)
		start := time.Now()
		_, err := rt.RoundTrip(req)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want cancelled", err)
		}
		l, hint := retry.LimitOf(err)
		if l != retry.Throttle || !hint.Equal(start.Add(30*time.Second)) {
			t.Errorf("LimitOf = %v, %v; want throttle, %v", l, hint, start.Add(30*time.Second))
		}
	})
}

// TestDeadlineNoWait: a hint that would end after the request's deadline is
// not waited: the 429 comes back at once.
func TestDeadlineNoWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := &scripted{replies: []func(http.ResponseWriter){reply(429, "slow down", "Retry-After", "30"), reply(200, "ok")}}
		rt := newRT(t, transport.Settings{Base: up.rt()})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://api.test/", nil)
		start := time.Now()
		res, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 429 || string(b) != "slow down" || len(up.at) != 1 || time.Since(start) != 0 {
			t.Errorf("status %d %q after %d calls and %v; want the 429 at once", res.StatusCode, b, len(up.at), time.Since(start))
		}
	})
}
