package gateway

import (
	"context"
	"errors"
	"net/http"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/metrics"
)

// ErrHalted is the cause a server cancels its requests' contexts with when
// it stops serving them (the end of a drain's grace, docs/GATEWAY.md §9.4;
// e.g. through http.Server.BaseContext and context.WithCancelCause): a
// stream still open then gets its wire's error event before its
// connection closes, never a silent cut, and a request not yet answered a
// 503. Neither is a verdict against the model.
var ErrHalted = errors.New("the gateway is shutting down")

// outcomeHalted: the request was ended by the server's halt (ErrHalted).
const outcomeHalted = "halted"

// haltMessage is what a halted client reads.
const haltMessage = "the gateway is shutting down (the end of its drain); send the request again"

// halted reports whether the request's context ended with ErrHalted.
func (x *exchange) halted() bool {
	return errors.Is(context.Cause(x.r.Context()), ErrHalted)
}

// haltStream ends a committed stream the server halted: the upstream
// request is cancelled, the ticket settles nothing, and the client gets its
// wire's error event.
func (x *exchange) haltStream(tk ticket, res *result) {
	res.cancel(ErrHalted)
	x.settle(tk, metrics.Cancel, 0)
	if ev := wire.Broken(x.in.endpoint.wire, haltMessage, x.out.respID, false); len(ev) > 0 {
		_, _ = x.w.Write(ev)
		_ = http.NewResponseController(x.w).Flush()
	}
	x.done(outcomeHalted, http.StatusOK, ErrHalted.Error())
}

// haltAnswer answers a request the server halted before it was answered:
// 503 in its wire's error shape, the ticket settling nothing.
func (x *exchange) haltAnswer(tk ticket) {
	x.settle(tk, metrics.Cancel, 0)
	x.w.Header().Set("Retry-After", "1")
	x.in.endpoint.writeError(x.w, http.StatusServiceUnavailable, apiError{Message: haltMessage, Type: "api_error", Code: "shutting_down"})
	x.done(outcomeHalted, http.StatusServiceUnavailable, ErrHalted.Error())
}
