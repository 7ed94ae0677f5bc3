package openai

import (
	"context"
	"errors"
	"net/http"
	"time"

	sdk "github.com/openai/openai-go/v3"

	"github.com/loopctl/loopctl-go/provider/internal/httperr"
	"github.com/loopctl/loopctl-go/retry"
)

// MapError turns the error of an openai-go call into the error the retry
// ladder and the breakers classify, exactly as [Provider] does, so that code
// calling the SDK directly can classify its errors with [retry.Classify]:
//
//   - the caller's cancellation (ctx has ended): an error matching ctx.Err();
//   - an HTTP error status: a [*retry.StatusError] with the code, the
//     provider's words, the rate-limit kind ([retry.LimitFor]) and the hint
//     ([retry.HintFromHeader], read at now; a zero now means time.Now()) as
//     Hint and RetryAfter, wrapping err;
//   - no response at all (a connection error or timeout): err as it is;
//   - a 2xx response that could not be read: an error wrapping
//     [ErrBadResponse] and err (transient to the ladder).
//
// raw is the response the SDK received (option.WithResponseInto), or nil.
// MapError(ctx, nil, raw, now) is nil.
func MapError(ctx context.Context, err error, raw *http.Response, now time.Time) error {
	return httperr.MapAt(ctx, readError(err, raw), now)
}

// readError reads what the retry ladder classifies from an error of the
// SDK (an *openai.Error carries the status, its words and headers) and from
// raw, the response the SDK received (or nil).
func readError(err error, raw *http.Response) httperr.Call {
	c := httperr.Call{Provider: "openai", Err: err, Raw: raw, BadResponse: ErrBadResponse}
	if apiErr, ok := errors.AsType[*sdk.Error](err); ok {
		c.APIStatus = apiErr.StatusCode
		c.APIMessage, c.APICode, c.APIType = apiErr.Message, apiErr.Code, apiErr.Type
		if c.APIType == "" {
			c.APIType = errorStatus(apiErr.RawJSON())
		}
		if apiErr.Response != nil {
			c.APIHeader = apiErr.Response.Header
		}
	}
	return c
}

// StatusError returns the [*retry.StatusError] for an openai-go error that
// carries an HTTP error status (an *openai.Error), with its kind and its hint
// read at time.Now(), or nil if err carries none.
func StatusError(err error) *retry.StatusError {
	return httperr.StatusOf(readError(err, nil))
}
