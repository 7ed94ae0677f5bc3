package httperr

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/retry"
)

var errBad = errors.New("bad response")

func TestMap(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	sdkErr := errors.New("sdk says no")
	hdr := http.Header{"Retry-After": {"7"}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		ctx      context.Context
		call     Call
		class    retry.Class
		code     int
		after    time.Duration
		isErr    []error
		wantSame bool   // Map returns c.Err itself
		text     string // the wanted error text; "": not checked
	}{
		{name: "api error 429 with Retry-After", ctx: context.Background(),
			call:  Call{Provider: "p", Err: sdkErr, APIStatus: 429, APIHeader: hdr},
			class: retry.RateLimited, code: 429, after: 7 * time.Second, isErr: []error{sdkErr}},
		{name: "api error 400", ctx: context.Background(),
			call:  Call{Provider: "p", Err: sdkErr, APIStatus: 400},
			class: retry.Permanent, code: 400, isErr: []error{sdkErr}, text: "retry: HTTP 400 Bad Request: sdk says no"},
		{name: "api error 400 with the provider's message, code and type", ctx: context.Background(),
			call: Call{Provider: "p", Err: sdkErr, APIStatus: 400, APIMessage: "too many tokens",
				APICode: "context_length_exceeded", APIType: "invalid_request_error"},
			class: retry.Permanent, code: 400, isErr: []error{sdkErr},
			text: "retry: HTTP 400 Bad Request: too many tokens (code context_length_exceeded, type invalid_request_error)"},
		{name: "error status the SDK could not parse", ctx: context.Background(),
			call:  Call{Provider: "p", Err: sdkErr, Raw: &http.Response{StatusCode: 503, Header: hdr}},
			class: retry.Transient, code: 503, after: 7 * time.Second, isErr: []error{sdkErr}},
		{name: "no response: connection error as it is", ctx: context.Background(),
			call: Call{Provider: "p", Err: sdkErr}, class: retry.Transient, wantSame: true},
		{name: "unreadable 200", ctx: context.Background(),
			call:  Call{Provider: "p", Err: sdkErr, Raw: &http.Response{StatusCode: 200}, BadResponse: errBad},
			class: retry.Transient, isErr: []error{errBad, sdkErr}},
		{name: "caller cancelled", ctx: cancelled,
			call:  Call{Provider: "p", Err: sdkErr, APIStatus: 500},
			class: retry.Permanent, isErr: []error{context.Canceled, sdkErr}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Map(tt.ctx, tt.call, now)
			if got := retry.Classify(err); got != tt.class {
				t.Errorf("Classify(%v) = %v, want %v", err, got, tt.class)
			}
			var se *retry.StatusError
			if errors.As(err, &se) != (tt.code != 0) {
				t.Fatalf("StatusError in %v: %v, want %v", err, se != nil, tt.code != 0)
			}
			if se != nil && (se.Code != tt.code || se.RetryAfter != tt.after) {
				t.Errorf("StatusError = {%d, %v}, want {%d, %v}", se.Code, se.RetryAfter, tt.code, tt.after)
			}
			for _, target := range tt.isErr {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = false", err, target)
				}
			}
			if tt.text != "" && err.Error() != tt.text {
				t.Errorf("text %q, want %q", err, tt.text)
			}
			if tt.wantSame && err != tt.call.Err {
				t.Errorf("Map = %v, want the SDK error itself", err)
			}
		})
	}
}

// TestMapKinds: the StatusError carries the kind (retry.LimitFor of the
// status and the provider's words) and the hint (retry.HintFromHeader).
func TestMapKinds(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	sdkErr := errors.New("sdk")
	tests := []struct {
		name  string
		call  Call
		limit retry.Limit
		hint  time.Time
	}{
		{"throttle with Retry-After", Call{Err: sdkErr, APIStatus: 429, APIHeader: http.Header{"Retry-After": {"7"}}},
			retry.Throttle, now.Add(7 * time.Second)},
		{"quota", Call{Err: sdkErr, APIStatus: 429, APICode: "insufficient_quota", APIType: "insufficient_quota"}, retry.Quota, time.Time{}},
		{"overload", Call{Err: sdkErr, APIStatus: 529, APIType: "overloaded_error"}, retry.Overload, time.Time{}},
		{"reset of the exhausted limit", Call{Err: sdkErr, APIStatus: 429, APIHeader: http.Header{
			"X-Ratelimit-Remaining-Tokens": {"0"}, "X-Ratelimit-Reset-Tokens": {"6m0s"}}}, retry.Throttle, now.Add(6 * time.Minute)},
		{"500", Call{Err: sdkErr, APIStatus: 500}, retry.NoLimit, time.Time{}},
		{"unparsed 529", Call{Err: sdkErr, Raw: &http.Response{StatusCode: 529, Header: http.Header{"Retry-After-Ms": {"250"}}}},
			retry.Overload, now.Add(250 * time.Millisecond)},
	}
	for _, tt := range tests {
		se, ok := errors.AsType[*retry.StatusError](Map(context.Background(), tt.call, now))
		if !ok {
			t.Fatalf("%s: no StatusError", tt.name)
		}
		if se.Limit != tt.limit || !se.Hint.Equal(tt.hint) {
			t.Errorf("%s: Limit %v, Hint %v; want %v, %v", tt.name, se.Limit, se.Hint, tt.limit, tt.hint)
		}
		if want := max(tt.hint.Sub(now), 0); !tt.hint.IsZero() && se.RetryAfter != want {
			t.Errorf("%s: RetryAfter %v, want %v", tt.name, se.RetryAfter, want)
		}
	}
}
