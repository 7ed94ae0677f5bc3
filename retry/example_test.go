package retry_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/loopctl/loopctl-go/retry"
)

func ExampleDo() {
	calls := 0
	p := retry.Policy{
		Rand: func() float64 { return 0 }, // deterministic: full jitter with r = 0 waits 0
		OnRetry: func(a retry.Attempt) {
			fmt.Printf("attempt %d failed (%v); retrying in %v\n", a.Number, a.Err, a.Delay)
		},
	}
	reply, err := retry.Do(context.Background(), p, func(ctx context.Context) (string, error) {
		calls++
		if calls < 3 {
			return "", &retry.StatusError{Code: http.StatusServiceUnavailable, Err: errors.New("overloaded")}
		}
		return "hello", nil
	})
	fmt.Println(reply, err)
	// Output:
	// attempt 1 failed (retry: HTTP 503 Service Unavailable: overloaded); retrying in 0s
	// attempt 2 failed (retry: HTTP 503 Service Unavailable: overloaded); retrying in 0s
	// hello <nil>
}

func ExampleDo_permanent() {
	calls := 0
	_, err := retry.Do(context.Background(), retry.Policy{}, func(ctx context.Context) (string, error) {
		calls++
		return "", &retry.StatusError{Code: http.StatusUnauthorized, Err: errors.New("bad API key")}
	})
	fmt.Println(calls, err)
	// Output:
	// 1 retry: HTTP 401 Unauthorized: bad API key
}

func ExamplePolicy_Delay() {
	var p retry.Policy // defaults: 100ms base, 10s cap, full jitter
	for a := range 8 {
		fmt.Print(p.Delay(a, 0.5), ";")
	}
	fmt.Println()

	p = retry.Policy{Jitter: retry.ProportionalJitter} // ±10%
	fmt.Println(p.Delay(0, 0), p.Delay(0, 0.5), p.Delay(10, 0))
	// Output:
	// 50ms;100ms;200ms;400ms;800ms;1.6s;3.2s;5s;
	// 90ms 100ms 9s
}

func ExampleClassify() {
	for _, err := range []error{
		&retry.StatusError{Code: 503},
		&retry.StatusError{Code: 429},
		&retry.StatusError{Code: 400},
		context.Canceled,
		context.DeadlineExceeded,
		retry.Unrecoverable(errors.New("invalid tool arguments")),
	} {
		fmt.Println(retry.Classify(err))
	}
	// Output:
	// transient
	// rate-limited
	// permanent
	// permanent
	// transient
	// permanent
}

func ExampleParseRetryAfter() {
	now := time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)
	fmt.Println(retry.ParseRetryAfter("120", now))
	fmt.Println(retry.ParseRetryAfter("Sun, 29 Nov 2026 19:01:30 GMT", now))
	fmt.Println(retry.ParseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now))
	fmt.Println(retry.ParseRetryAfter("soon", now))
	// Output:
	// 2m0s true
	// 1m30s true
	// 0s true
	// 0s false
}

func ExampleRetryAfterFromHeader() {
	h := http.Header{}
	h.Set("Retry-After", "1")
	h.Set("Retry-After-Ms", "1500")
	fmt.Println(retry.RetryAfterFromHeader(h, time.Now())) // the later of the two
	// Output:
	// 1.5s
}

func ExampleHintFromHeader() {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	h := http.Header{}
	h.Set("X-Ratelimit-Remaining-Requests", "0") // the exhausted limit
	h.Set("X-Ratelimit-Reset-Requests", "1m30.5s")
	h.Set("X-Ratelimit-Remaining-Tokens", "1200")
	h.Set("X-Ratelimit-Reset-Tokens", "20ms")
	fmt.Println(retry.HintFromHeader(h, now).Format(time.TimeOnly + ".0"))
	// Output:
	// 12:01:30.5
}

func ExampleLimitFor() {
	fmt.Println(retry.LimitFor(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota"))
	fmt.Println(retry.LimitFor(529, "overloaded_error", "", "Overloaded"))
	fmt.Println(retry.LimitFor(429, "rate_limit_error", "", ""))
	fmt.Println(retry.LimitFor(500, "", "", ""))
	// Output:
	// quota
	// overload
	// throttle
	// none
}

// A POST through the ladder: its body is read by the first attempt, so every
// attempt builds its request again from the bytes (an http.Request cannot be
// sent twice once its body is read). The server fails the first attempt with
// 503 and echoes the body of the second.
func ExampleDo_post() {
	attempts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempts++
		if attempts == 1 {
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		}
		io.Copy(w, r.Body)
	}))
	defer srv.Close()
	client, url, ctx := srv.Client(), srv.URL, context.Background()

	body := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"ping"}]}`)
	policy := retry.Policy{}                  // defaults: 3 retries, 100ms…10s, full jitter
	policy.Rand = func() float64 { return 0 } // the example does not wait: full jitter with r = 0 waits 0
	resp, err := retry.Do(ctx, policy, func(ctx context.Context) (*http.Response, error) {
		// A new request per attempt: a retried POST must send its body again.
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, retry.Unrecoverable(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return nil, err // connection errors and timeouts are transient
		}
		if resp.StatusCode >= 400 {
			resp.Body.Close()
			return nil, &retry.StatusError{Code: resp.StatusCode,
				RetryAfter: retry.RetryAfterFromHeader(resp.Header, time.Now()),
				Err:        errors.New(resp.Status)}
		}
		return resp, nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	echo, _ := io.ReadAll(resp.Body)
	fmt.Println(attempts, "attempts;", string(echo))
	// Output: 2 attempts; {"model":"gpt-4o-mini","messages":[{"role":"user","content":"ping"}]}
}
