package wire

import (
	"encoding/json"
	"strings"
)

// openAIError is the OpenAI error object (chat completions, Responses).
type openAIError struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// anthropicError is the Anthropic error object.
type anthropicError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// anthropicTypes are the error types Anthropic answers with.
var anthropicTypes = map[string]bool{
	"invalid_request_error": true, "authentication_error": true, "billing_error": true,
	"permission_error": true, "not_found_error": true, "request_too_large": true,
	"rate_limit_error": true, "api_error": true, "timeout_error": true, "overloaded_error": true,
}

// anthropicType is Anthropic's error type for a status.
func anthropicType(status int) string {
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		return "authentication_error"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 413:
		return "request_too_large"
	case 429:
		return "rate_limit_error"
	case 529:
		return "overloaded_error"
	}
	return "api_error"
}

// ErrorBody returns an error body in the wire's own shape (GATEWAY §6,
// §8.6). Chat and Responses: {"error": {"message", "type", "param": null,
// "code"}} (code null when empty). Messages: {"type": "error", "error":
// {"type", "message"}}, whose type is typ when it is one of Anthropic's
// types and otherwise Anthropic's type for the status.
func ErrorBody(api API, status int, typ, code, message string) []byte {
	var body []byte
	if api == Messages {
		if !anthropicTypes[typ] {
			typ = anthropicType(status)
		}
		body, _ = json.Marshal(struct {
			Type  string         `json:"type"`
			Error anthropicError `json:"error"`
		}{"error", anthropicError{Type: typ, Message: message}})
		return body
	}
	e := openAIError{Message: message, Type: typ}
	if code != "" {
		e.Code = &code
	}
	body, _ = json.Marshal(struct {
		Error openAIError `json:"error"`
	}{e})
	return body
}

// errorBodyIn reads both error shapes, the flat one some OpenAI
// compatible servers send ({"object": "error", "message", "type", "code"})
// and a Responses stream's response.failed event ({"response": {"error":
// {...}}}).
type errorBodyIn struct {
	Error    json.RawMessage `json:"error"`
	Message  string          `json:"message"`
	Type     string          `json:"type"`
	Code     json.RawMessage `json:"code"`
	Response *struct {
		Error json.RawMessage `json:"error"`
	} `json:"response"`
}

// errorObjectIn is the error object of either shape (Status: Google's, as
// Vertex AI sends it).
type errorObjectIn struct {
	Message string          `json:"message"`
	Type    json.RawMessage `json:"type"`
	Code    json.RawMessage `json:"code"`
	Status  string          `json:"status"`
}

// ErrorFields are what an upstream error body says, as [ReadError] reads it.
type ErrorFields struct {
	// Type and Code are the error's type and code (a number given as its
	// digits), Message its message, Status Google's error status.
	Type, Code, Message, Status string
	// Object: the body is {"error": {...}} (OpenAI's, Anthropic's or
	// Google's shape), not a flat object, a string error or an event.
	Object bool
	// Parsed: the body is a JSON object at all.
	Parsed bool
}

// ReadError reads an upstream error body of any shape (OpenAI's
// {"error": {...}}, Anthropic's {"type": "error", "error": {...}}, or a
// flat object, or {"error": "text"}), or a stream's error event (chat's
// and Messages' in those shapes, Responses' error flat and its
// response.failed). It is the one reader of error bodies: what classifies
// an error, what a client is told of it and what is translated of it all
// come from it.
func ReadError(body []byte) ErrorFields {
	var in errorBodyIn
	if json.Unmarshal(body, &in) != nil {
		return ErrorFields{}
	}
	var obj errorObjectIn
	var text string
	object := firstByte(in.Error) == '{'
	if !isSetJSON(in.Error) && in.Response != nil {
		in.Error = in.Response.Error
	}
	switch first := firstByte(in.Error); {
	case first == '{' && json.Unmarshal(in.Error, &obj) == nil:
		return ErrorFields{Type: errorCode(obj.Type), Code: errorCode(obj.Code), Message: obj.Message, Status: obj.Status, Object: object, Parsed: true}
	case first == '"' && json.Unmarshal(in.Error, &text) == nil:
		return ErrorFields{Type: in.Type, Code: errorCode(in.Code), Message: text, Parsed: true}
	}
	if in.Type == "error" {
		in.Type = ""
	}
	return ErrorFields{Type: in.Type, Code: errorCode(in.Code), Message: in.Message, Parsed: true}
}

// ErrorMessage is [ReadError]'s type, code and message; a body it cannot
// read gives its text, trimmed, as the message.
func ErrorMessage(body []byte) (typ, code, message string) {
	f := ReadError(body)
	if !f.Parsed {
		return "", "", strings.TrimSpace(string(body))
	}
	return f.Type, f.Code, f.Message
}

// firstByte is the first byte of raw JSON, 0 when empty.
func firstByte(raw json.RawMessage) byte {
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

// errorCode reads an error code: a string, or a number as its digits.
func errorCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// overflowPhrases are the phrases of a context-window error's message
// (Anthropic's input and max_tokens over the window: "exceed context
// limit"; llama.cpp: "exceeds the available context size").
var overflowPhrases = []string{
	"maximum context length", "context_length_exceeded", "context length exceeded",
	"prompt is too long", "input is too long", "too many tokens",
	"context window", "model_context_window_exceeded", "exceed context limit",
	"exceeds the available context size",
}

// ContextOverflow reports whether an upstream error body (of any wire) says
// the request did not fit the model's context window: OpenAI's code
// context_length_exceeded, or a message saying so (GATEWAY §8.6).
func ContextOverflow(body []byte) bool {
	_, code, message := ErrorMessage(body)
	if code == "context_length_exceeded" {
		return true
	}
	message = strings.ToLower(message)
	for _, phrase := range overflowPhrases {
		if strings.Contains(message, phrase) {
			return true
		}
	}
	return false
}

// OverflowBody is a context-window error in the form the client's tools
// act on (GATEWAY §8.6), sent with status 400: Messages
// invalid_request_error whose message contains "prompt is too long"; chat
// and Responses invalid_request_error with code context_length_exceeded.
func OverflowBody(api API) []byte {
	if api == Messages {
		return ErrorBody(api, 400, "invalid_request_error", "",
			"prompt is too long: the request exceeds the context window of the model that served it")
	}
	return ErrorBody(api, 400, "invalid_request_error", "context_length_exceeded",
		"This model's maximum context length was exceeded: the request is too long for the model that served it.")
}
