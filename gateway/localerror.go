package gateway

import (
	"errors"
	"net/http"
	"time"

	"github.com/loopctl/loopctl-go/metrics"
)

// Failures on the gateway's side: they carry no verdict against a model,
// are not retried, and reach the client in its wire's error shape.

// localError is an attempt that failed on the gateway's side, not the
// model's: it carries no verdict against the model (the ticket is cancelled),
// is not retried, and the client gets status with e.
type localError struct {
	status int
	e      apiError
	retry  time.Duration // > 0: sent as Retry-After
}

func (e *localError) Error() string { return e.e.Message }

// local answers an attempt that failed with a *localError and reports true;
// it reports false for every other error.
func (x *exchange) local(tk ticket, err error) bool {
	var le *localError
	if !errors.As(err, &le) {
		return false
	}
	tk.Cancel()
	x.g.m.call(x.in.rt.name, metrics.Cancel)
	h := x.w.Header()
	x.headers(h)
	if le.retry > 0 {
		h.Set("Retry-After", ceilSeconds(int64(le.retry)))
	}
	x.in.endpoint.writeError(x.w, le.status, le.e)
	x.done(outcomeLocal, le.status, le.e.Message)
	return true
}

// outcomeLocal: an attempt failed on the gateway's side (a limit of its
// own), with no verdict against the model.
const outcomeLocal = "gateway_limit"

// shapeMismatch: the upstream answered a stream to a request that did not
// ask for one (the request was read differently, not the model's failure).
var shapeMismatch = &localError{status: http.StatusBadGateway, e: apiError{
	Message: "the upstream answered a stream to a request without \"stream\": true",
	Type:    "upstream_error", Code: "unexpected_stream"}}

// refuseLocal answers a request refused before routing with a
// *localError's status, Retry-After and error.
func (x *exchange) refuseLocal(err error) {
	le := err.(*localError)
	if le.retry > 0 {
		x.w.Header().Set("Retry-After", ceilSeconds(int64(le.retry)))
	}
	x.refuse(le.status, le.e)
}
