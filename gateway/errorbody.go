package gateway

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Reading an upstream's error body: what classifies it, and the short
// tokens the gateway may repeat to a client (never the message, which may
// echo anything).

// errorFields reads an error body's type, code and message (OpenAI's and
// Anthropic's shapes; Google's status stands in for a missing type). The
// message is used only to classify, never shown to a client.
func errorFields(body []byte) (typ, code, msg string) {
	var e struct {
		Error struct {
			Type    any    `json:"type"`
			Code    any    `json:"code"`
			Status  string `json:"status"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &e) != nil {
		return "", "", ""
	}
	typ, code = token(e.Error.Type), token(e.Error.Code)
	if typ == "" {
		typ = token(e.Error.Status)
	}
	return typ, code, e.Error.Message
}

// errorInfo returns what the gateway repeats of an upstream's error body:
// its error type and code (OpenAI or Anthropic shape), as " (type T, code
// C)", each only when it is a short printable token; never the message,
// which may echo anything (keys included).
func errorInfo(body []byte) string {
	var e struct {
		Type  any `json:"type"`
		Error struct {
			Type any `json:"type"`
			Code any `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &e) != nil {
		return ""
	}
	s := ""
	if t := token(e.Error.Type); t != "" {
		s = "type " + t
	}
	if c := token(e.Error.Code); c != "" {
		if s != "" {
			s += ", "
		}
		s += "code " + c
	}
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// token returns v as text when it is a short string or number of
// identifier characters, else "".
func token(v any) string {
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case float64:
		s = strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return ""
	}
	if s == "" || len(s) > 64 {
		return ""
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return ""
		}
	}
	return s
}
