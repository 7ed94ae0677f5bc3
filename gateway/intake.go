package gateway

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
)

// What a request passes before its first attempt: its body within
// limits.max_body, and its route.

// readBody reads the client's body into buf, within limits.max_body, and
// charges it to the bytes the gateway holds (the budget its answers share,
// [ResponseBudgetFactor] × the larger of limits.max_response and
// limits.max_body): a declared length before reading, what was read after.
// It returns what it charged (to be freed when the request ends) and false
// when it refused the request (413, 400, or 503 gateway_busy when the
// budget is spent).
func (x *exchange) readBody(buf *bytes.Buffer) (int64, bool) {
	g, r := x.g, x.r
	if r.ContentLength > g.limits.maxBody {
		x.refuse(http.StatusRequestEntityTooLarge, tooLarge(g.limits.maxBody))
		return 0, false
	}
	charged := max(r.ContentLength, 0)
	if !g.held.reserve(charged) {
		x.refuseLocal(errGatewayFull)
		return 0, false
	}
	x.in.body = io.LimitedReader{R: r.Body, N: g.limits.maxBody + 1}
	if _, err := buf.ReadFrom(&x.in.body); err != nil {
		x.refuse(http.StatusBadRequest, apiError{Message: "could not read the request body: " + err.Error(), Type: "invalid_request_error"})
		return charged, false
	}
	if int64(buf.Len()) > g.limits.maxBody {
		x.refuse(http.StatusRequestEntityTooLarge, tooLarge(g.limits.maxBody))
		return charged, false
	}
	if n := int64(buf.Len()); n > charged {
		if !g.held.reserve(n - charged) {
			x.refuseLocal(errGatewayFull)
			return charged, false
		}
		charged = n
	}
	return charged, true
}

// route finds the request's route and budget, or refuses the request.
func (x *exchange) route() bool {
	g, req := x.g, x.in.req
	rt, err := g.lookup(req.model)
	if err != nil {
		x.refuseLocal(err)
		return false
	}
	if rt == nil {
		x.refuse(http.StatusNotFound, apiError{Message: "The model `" + req.model + "` does not exist (see GET /v1/models)", Type: "invalid_request_error", Param: "model", Code: "model_not_found"})
		return false
	}
	if x.in.endpoint == embeddingsEndpoint && !rt.openai {
		x.refuse(http.StatusNotFound, apiError{Message: "The model `" + req.model + "` is not served on " + x.r.URL.Path + ": embeddings are served by openai upstreams only, and no entry of its chain is one", Type: "invalid_request_error", Param: "model", Code: "model_not_found"})
		return false
	}
	x.in.rt, x.in.budget = rt, rt.budget
	if !x.in.endpoint.settles {
		x.in.budget = 1
	}
	if x.in.endpoint.pinned && wire.Minted(req.prev) {
		// A response the gateway minted by translation: it keeps no state
		// for it, so no upstream can continue it (§8.3).
		x.refuse(http.StatusBadRequest, apiError{Message: "Previous response with id '" + req.prev + "' not found: it was translated from another wire by loopctl, which keeps no state for it; send the whole conversation instead", Type: "invalid_request_error", Param: "previous_response_id", Code: "previous_response_not_found"})
		return false
	}
	if x.in.endpoint.pinned && req.prev != "" {
		// Stateful Responses: the upstream model that produced the previous
		// response, on its own breaker; an unknown id goes to the routed
		// model without failover.
		x.in.budget, x.in.pinned = 1, true
		if ref := g.pins.lookup(x.r.Context(), req.prev); ref != "" {
			if x.in.pin = g.pinnedMember(rt, ref); x.in.pin != nil {
				return true // the member's own breaker decides (pool_pins.go)
			}
			if prt, err := g.lookup(ref); err == nil && prt != nil {
				x.in.rt, x.in.budget = prt, prt.budget
			}
		}
	}
	return !x.refuseOpen()
}

func tooLarge(limit int64) apiError {
	return apiError{Message: "the request body is larger than limits.max_body (" + strconv.FormatInt(limit, 10) + " bytes)", Type: "invalid_request_error", Code: "request_too_large"}
}

// refuse answers a request the gateway rejects before routing it.
func (x *exchange) refuse(status int, e apiError) {
	x.in.endpoint.writeError(x.w, status, e)
	x.done(outcomeInvalid, status, e.Message)
}
