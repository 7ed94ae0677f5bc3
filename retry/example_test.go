package retry_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
