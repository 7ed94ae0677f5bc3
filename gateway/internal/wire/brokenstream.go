package wire

import "encoding/json"

// brokenResponsesError is the error event of a broken Responses stream.
// Its fields are in the order encoding/json writes a map's keys.
type brokenResponsesError struct {
	Code    string  `json:"code"`
	Message string  `json:"message"`
	Param   *string `json:"param"` // always null
	Type    string  `json:"type"`
}

// brokenResponseFailed is the response.failed event that ends a broken
// Responses stream.
type brokenResponseFailed struct {
	Response struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		ID     string      `json:"id"`
		Object string      `json:"object"`
		Output [0]struct{} `json:"output"` // always []
		Status string      `json:"status"`
	} `json:"response"`
	Type string `json:"type"`
}

// Broken returns the events that end a stream of wire api that broke after
// its first content, saying msg (GATEWAY §6). Chat: data: {"error": ...}
// of type upstream_error, code stream_interrupted, and no [DONE].
// Messages: an error event of type api_error. Responses: an error event
// with code stream_interrupted, then response.failed for the response
// respID. forwarded says that the upstream's own error event already
// reached the client: chat and Messages then add nothing, Responses only
// response.failed.
func Broken(api API, msg, respID string, forwarded bool) []byte {
	switch api {
	case Messages:
		if forwarded {
			return nil
		}
		return appendNamedEvent(nil, "error", ErrorBody(Messages, 500, "", "", msg))
	case Responses:
		var out []byte
		if !forwarded {
			b, _ := json.Marshal(brokenResponsesError{Code: "stream_interrupted", Message: msg, Type: "error"})
			out = appendNamedEvent(out, "error", b)
		}
		var failed brokenResponseFailed
		failed.Type = "response.failed"
		failed.Response.ID, failed.Response.Object, failed.Response.Status = respID, "response", "failed"
		failed.Response.Error.Code, failed.Response.Error.Message = "stream_interrupted", msg
		b, _ := json.Marshal(failed)
		return appendNamedEvent(out, "response.failed", b)
	}
	if forwarded {
		return nil
	}
	return appendDataEvent(nil, ErrorBody(Chat, 500, "upstream_error", "stream_interrupted", msg))
}
