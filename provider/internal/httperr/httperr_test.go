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
