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

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/retry"
	"github.com/loopctl/loopctl-go/transport"
)

// TestRetryAfter: a 429's Retry-After (seconds, or an HTTP-date read on the
// breaker's clock) is the ladder's wait, not its default.
func TestRetryAfter(t *testing.T) {
	for _, hint := range []string{"7", "date"} {
		t.Run(hint, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := 0
				up := handlerRT{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n++
					if n == 1 {
						h := hint
						if h == "date" {
							h = time.Now().Add(7 * time.Second).UTC().Format(http.TimeFormat)
						}
						w.Header().Set("Retry-After", h)
						w.WriteHeader(http.StatusTooManyRequests)
						return
					}
					io.WriteString(w, "ok")
				})}
				var waits []time.Duration
				rt := newRT(t, transport.Settings{Base: up, Retry: retry.Policy{OnRetry: func(a retry.Attempt) {
					waits = append(waits, a.Delay)
				}}})
				start := time.Now()
				req, _ := http.NewRequest("POST", "http://api.test/v1/chat/completions", strings.NewReader("{}"))
				res, err := rt.RoundTrip(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if string(b) != "ok" || n != 2 {
					t.Errorf("got %q after %d attempts", b, n)
				}
				if len(waits) != 1 || waits[0] != 7*time.Second || time.Since(start) != 7*time.Second {
					t.Errorf("waits %v, elapsed %v; want one wait of 7s", waits, time.Since(start))
				}
			})
		})
	}
}

// TestProbeLease: a probe that hangs is cut at the end of its lease, with the
// caller's context still live; the breaker is open again, dated at the lease
// end. The same holds for a probe whose response body hangs mid-stream.
func TestProbeLease(t *testing.T) {
	for _, where := range []string{"headers", "body"} {
		t.Run(where, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				const lease = 2 * time.Second
				mode := "fail"
				up := rtFunc(func(r *http.Request) (*http.Response, error) {
					switch mode {
					case "fail":
						return &http.Response{StatusCode: 503, Body: http.NoBody, Request: r}, nil
					case "headers":
						return hang(r)
					}
					return &http.Response{StatusCode: 200, Body: &hangingBody{ctx: r.Context()}, ContentLength: -1, Request: r}, nil
				})
				rt := newRT(t, transport.Settings{
					Base:    up,
					Retry:   retry.Policy{MaxRetries: -1},
					Breaker: breaker.Settings{FailureThreshold: 1, RecoveryDuration: time.Minute, ProbeTimeout: lease},
				})
				get := func() (*http.Response, error) {
					req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://api.test/", nil)
					return rt.RoundTrip(req)
				}
				res, err := get()
				if err != nil || res.StatusCode != 503 {
					t.Fatalf("%v %v", res, err)
				}
				b := rt.Registry().Breaker("api.test")
				if b.State() != breaker.Open {
					t.Fatalf("state %v", b.State())
				}
				time.Sleep(time.Minute)
				mode = where
				start := time.Now()
				res, err = get()
				if where == "body" {
					if err != nil {
						t.Fatal(err)
					}
					_, err = io.ReadAll(res.Body)
					res.Body.Close()
				}
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("err %v, want a deadline", err)
				}
				if _, ok := errors.AsType[*transport.ProbeTimeoutError](err); where == "headers" && !ok {
					t.Errorf("err %T %v, want a *transport.ProbeTimeoutError", err, err)
				}
				if d := time.Since(start); d != lease {
					t.Errorf("the probe ended after %v, want the lease %v", d, lease)
				}
				s := b.Snapshot()
				if s.State != breaker.Open || !s.LastFailure.Equal(start.Add(lease)) {
					t.Errorf("snapshot %+v, want open with the last failure at the lease end %v", s, start.Add(lease))
				}
			})
		})
	}
}

// hangingBody is a response body that blocks until its context ends.
type hangingBody struct{ ctx context.Context }

func (b *hangingBody) Read([]byte) (int, error) {
	<-b.ctx.Done()
	return 0, b.ctx.Err()
}

func (b *hangingBody) Close() error { return nil }

// TestTimeoutDatedAtStart (SEMANTICS §1, rev 3): a request that is not the
// probe and hangs until the caller's deadline is a failure dated at its start.
func TestTimeoutDatedAtStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		up := rtFunc(func(r *http.Request) (*http.Response, error) { return hang(r) })
		rt := newRT(t, transport.Settings{
			Base:    up,
			Retry:   retry.Policy{MaxRetries: -1},
			Breaker: breaker.Settings{FailureThreshold: 3},
		})
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://api.test/", nil)
		if _, err := rt.RoundTrip(req); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v, want a deadline", err)
		}
		s := rt.Registry().Breaker("api.test").Snapshot()
		if s.ConsecutiveFailures != 1 || !s.LastFailure.Equal(start) {
			t.Fatalf("snapshot %+v, want 1 failure dated at the start %v (5s before its end)", s, start)
		}
	})
}
