package gateway

import (
	"bytes"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
)

// Reading an upstream's error body: what classifies it, and the short
// tokens the gateway may repeat to a client (never the message, which may
// echo anything).

// errorFields reads an error body's type, code and message (OpenAI's and
// Anthropic's shapes; Google's status stands in for a missing type). The
// message is used only to classify, never shown to a client.
func errorFields(body []byte) (typ, code, msg string) {
	e := wire.ReadError(bytes.TrimSpace(body))
	if !e.Object {
		return "", "", ""
	}
	typ, code = token(e.Type), token(e.Code)
	if typ == "" {
		typ = token(e.Status)
	}
	return typ, code, e.Message
}

// errorInfo returns what the gateway repeats of an upstream's error body:
// its error type and code (OpenAI or Anthropic shape), as " (type T, code
// C)", each only when it is a short printable token; never the message,
// which may echo anything (keys included).
func errorInfo(body []byte) string {
	e := wire.ReadError(bytes.TrimSpace(body))
	if !e.Object {
		return ""
	}
	s := ""
	if t := token(e.Type); t != "" {
		s = "type " + t
	}
	if c := token(e.Code); c != "" {
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

// token returns s when it is a short run of identifier characters (a type,
// a code, a number's digits), else "": only such a token is repeated.
func token(s string) string {
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
