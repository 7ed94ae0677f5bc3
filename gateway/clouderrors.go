package gateway

import (
	"bytes"
	"cmp"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/retry"
)

// cloudError is what a Bedrock or Vertex error means (GATEWAY §10.2): the
// status and Anthropic error type a client sees it as (so that it reaches
// every client in its own wire's shape, never as the cloud sent it), and
// the verdict's kind when the status alone does not say it.
type cloudError struct {
	status  int
	typ     string      // Anthropic's error type
	limit   retry.Limit // NoLimit: as the status says
	timeout bool        // the model timed out
	name    string      // the cloud's own error name, for the message
	message string
}

// bedrockErrors map Bedrock's error types (x-amzn-ErrorType, or an
// exception frame's :exception-type with its first letter upper-cased).
var bedrockErrors = map[string]cloudError{
	"ThrottlingException":           {status: 429, typ: "rate_limit_error", limit: retry.Throttle},
	"ServiceQuotaExceededException": {status: 429, typ: "rate_limit_error", limit: retry.Quota},
	"ServiceUnavailableException":   {status: 503, typ: "api_error"},
	"ModelNotReadyException":        {status: 503, typ: "api_error"},
	"InternalServerException":       {status: 500, typ: "api_error"},
	"ModelStreamErrorException":     {status: 502, typ: "api_error"},
	"ModelErrorException":           {status: 502, typ: "api_error"},
	"ModelTimeoutException":         {status: 504, typ: "timeout_error", timeout: true},
	"ValidationException":           {status: 400, typ: "invalid_request_error"},
	"AccessDeniedException":         {status: 403, typ: "permission_error"},
	"ResourceNotFoundException":     {status: 404, typ: "not_found_error"},
	"UnrecognizedClientException":   {status: 401, typ: "authentication_error"},
	"ExpiredTokenException":         {status: 401, typ: "authentication_error"},
}

// googleErrors map Google's error statuses (Vertex AI's own errors; its
// Anthropic errors come in Anthropic's shape and pass as they are).
var googleErrors = map[string]cloudError{
	"RESOURCE_EXHAUSTED":  {status: 429, typ: "rate_limit_error"}, // Quota or Throttle by its message (SEMANTICS §4)
	"UNAVAILABLE":         {status: 503, typ: "api_error"},
	"INTERNAL":            {status: 500, typ: "api_error"},
	"DEADLINE_EXCEEDED":   {status: 504, typ: "timeout_error", timeout: true},
	"INVALID_ARGUMENT":    {status: 400, typ: "invalid_request_error"},
	"FAILED_PRECONDITION": {status: 400, typ: "invalid_request_error"},
	"UNAUTHENTICATED":     {status: 401, typ: "authentication_error"},
	"PERMISSION_DENIED":   {status: 403, typ: "permission_error"},
	"NOT_FOUND":           {status: 404, typ: "not_found_error"},
}

// bedrockError reads a Bedrock error answer: its type from
// x-amzn-ErrorType (or the body's __type), its message from the body.
func bedrockError(status int, h http.Header, body []byte) cloudError {
	var b struct {
		Message  string `json:"message"`
		MessageU string `json:"Message"`
		Type     string `json:"__type"`
	}
	_ = json.Unmarshal(body, &b)
	name := h.Get("X-Amzn-Errortype")
	if name == "" {
		name = b.Type
	}
	name, _, _ = strings.Cut(name, ":")
	name = name[strings.LastIndexByte(name, '#')+1:]
	return bedrockKind(status, name, cmp.Or(b.Message, b.MessageU))
}

// bedrockKind is the meaning of Bedrock's error name (status: the HTTP
// status it came with, kept for an unknown name).
func bedrockKind(status int, name, message string) cloudError {
	if len(name) > 0 && name[0] >= 'a' && name[0] <= 'z' {
		name = strings.ToUpper(name[:1]) + name[1:] // an exception frame's type
	}
	ce, ok := bedrockErrors[name]
	if !ok {
		ce = cloudError{status: status}
	}
	ce.name, ce.message = cmp.Or(name, "error"), message
	return ce
}

// vertexError reads a Vertex AI error answer: Anthropic's shape passes
// (its type kept), Google's ({"error": {"code", "message", "status"}},
// alone or in a list) maps by its status.
func vertexError(status int, _ http.Header, body []byte) cloudError {
	typ, _, msg := wire.ErrorMessage(body)
	var g struct {
		Error struct {
			Message string `json:"message"`
			Status  string `json:"status"`
		} `json:"error"`
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(trimmed, &list) == nil && len(list) > 0 {
			trimmed = list[0]
		}
	}
	if json.Unmarshal(trimmed, &g) == nil && g.Error.Status != "" {
		ce, ok := googleErrors[g.Error.Status]
		if !ok {
			ce = cloudError{status: status}
		}
		if g.Error.Status == "RESOURCE_EXHAUSTED" {
			ce.limit = retry.LimitFor(429, g.Error.Status, "", g.Error.Message)
		}
		ce.name, ce.message = g.Error.Status, g.Error.Message
		return ce
	}
	return cloudError{status: status, typ: typ, message: msg, timeout: typ == "timeout_error"}
}

// body is the error's answer in Anthropic's shape.
func (ce cloudError) body(api string) []byte {
	msg := ce.message
	if ce.name != "" {
		msg = api + ": " + ce.name + ": " + msg
	}
	return wire.ErrorBody(wire.Messages, ce.status, ce.typ, "", strings.TrimSuffix(msg, ": "))
}

// cloudAnswerError is the attempt's error for a cloud's error answer resp
// (body read, header not yet filtered): the upstream error in Anthropic's
// shape, classified with the cloud's kind.
func (g *Gateway) cloudAnswerError(c *cloud, resp *http.Response, body []byte) error {
	ce := c.errors(resp.StatusCode, resp.Header, body)
	h := responseHeaders(resp.Header)
	h["Content-Type"] = jsonContentType
	ue := &upstreamError{status: ce.status, header: h, body: ce.body(c.api)}
	se := statusError(ue, g.now())
	if ce.limit != retry.NoLimit {
		se.Limit = ce.limit
	}
	if ce.timeout {
		return &timeoutError{se}
	}
	return se
}
