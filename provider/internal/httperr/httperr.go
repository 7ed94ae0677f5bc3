// Package httperr turns the error of one provider SDK call into the error the
// retry ladder classifies: the caller's cancellation as it is, an HTTP error
// status as a *retry.StatusError with its hint (retry.HintFromHeader, also as
// RetryAfter) and its rate-limit kind (retry.LimitFor), no response at all
// (a connection error or timeout) as it is, and anything else (a 2xx response
// that could not be read) as the provider's bad-response error, which the
// ladder treats as transient.
package httperr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/loopctl/loopctl-go/retry"
)

// Call describes a failed SDK call.
type Call struct {
	// Provider names the provider in wrapped errors ("openai", "anthropic").
	Provider string
	// Err is the SDK's error.
	Err error
	// APIStatus and APIHeader come from the SDK's typed API error, when Err is
	// one (APIStatus 0: it is not).
	APIStatus int
	APIHeader http.Header
	// APIMessage, APICode and APIType are the provider's own error message,
	// machine-readable code and error type, from the SDK's typed API error
	// ("": not given). They go into the StatusError so that its text says what
	// the provider said, e.g. "context_length_exceeded".
	APIMessage, APICode, APIType string
	// Raw is the HTTP response the SDK received, if any.
	Raw *http.Response
	// BadResponse is the provider's sentinel for a response it cannot read.
	BadResponse error
}

// Map returns the error for c, reading the headers' hints against now. The
// kind of an error status comes from its code and the provider's type, code
// and message (APIType, APICode, APIMessage).
func Map(ctx context.Context, c Call, now time.Time) error {
	if cerr := ctx.Err(); cerr != nil {
		if errors.Is(c.Err, cerr) {
			return c.Err
		}
		return fmt.Errorf("%s: %w (%w)", c.Provider, cerr, c.Err)
	}
	if c.APIStatus != 0 {
		return &retry.StatusError{
			Code:       c.APIStatus,
			RetryAfter: retry.RetryAfterFromHeader(c.APIHeader, now),
			Hint:       retry.HintFromHeader(c.APIHeader, now),
			Limit:      retry.LimitFor(c.APIStatus, c.APIType, c.APICode, c.APIMessage),
			Err:        c.Err,
			Message:    c.APIMessage,
			ErrorCode:  c.APICode,
			Type:       c.APIType,
		}
	}
	if c.Raw == nil {
		return c.Err // no response: a connection error or timeout, as it is
	}
	if c.Raw.StatusCode >= 400 {
		// An error status whose body the SDK could not read as the API's error JSON.
		return &retry.StatusError{
			Code:       c.Raw.StatusCode,
			RetryAfter: retry.RetryAfterFromHeader(c.Raw.Header, now),
			Hint:       retry.HintFromHeader(c.Raw.Header, now),
			Limit:      retry.LimitFor(c.Raw.StatusCode, "", "", ""),
			Err:        fmt.Errorf("%s: HTTP %d: %w", c.Provider, c.Raw.StatusCode, c.Err),
		}
	}
	return fmt.Errorf("%w: %w", c.BadResponse, c.Err)
}

// MapAt is a provider's exported MapError: nil when c carries no error, else
// [Map] at now (a zero now: time.Now()).
func MapAt(ctx context.Context, c Call, now time.Time) error {
	if c.Err == nil {
		return nil
	}
	if now.IsZero() {
		now = time.Now()
	}
	return Map(ctx, c, now)
}

// StatusOf is a provider's exported StatusError: the [*retry.StatusError] that
// [Map] gives, at time.Now(), for a Call read from the SDK's typed API error
// with an HTTP status (c.APIStatus != 0), or nil for any other.
func StatusOf(c Call) *retry.StatusError {
	if c.APIStatus == 0 {
		return nil
	}
	se, _ := MapAt(context.Background(), c, time.Time{}).(*retry.StatusError)
	return se
}
