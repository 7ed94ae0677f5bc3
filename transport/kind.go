package transport

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
)

// maxPeek bounds how much of an error response's body the ladder reads to
// find the provider's error type, code and message.
const maxPeek = 16 << 10

// peeksBody reports whether the kind of an answer with this status may depend
// on its body (SEMANTICS §4): a quota is a 403 or 429 with a quota
// code, an overload a 503 saying overloaded or any 5xx whose type is
// overloaded_error.
func peeksBody(code int) bool {
	return code == http.StatusForbidden || code == http.StatusTooManyRequests || code >= 500
}

// peekError reads up to maxPeek bytes of resp's body, puts them back in front
// of the rest (the caller still reads the whole body, byte for byte) and
// returns the provider's error type, code and message found in them, in the
// shapes OpenAI ({"error":{"type","code","message"}}), Anthropic
// ({"type":"error","error":{"type","message"}}) and Google
// ({"error":{"code":429,"message","status"}}, also inside an array) send.
// The status stands for the type when there is no type.
func peekError(resp *http.Response) (errType, errCode, msg string) {
	if resp.Body == nil || resp.Body == http.NoBody {
		return "", "", ""
	}
	buf := make([]byte, maxPeek)
	n, _ := io.ReadFull(resp.Body, buf)
	buf = buf[:n]
	resp.Body = &replayed{Reader: io.MultiReader(bytes.NewReader(buf), resp.Body), rc: resp.Body}
	return errorWords(buf)
}

// errorWords parses an error body; "" for what it does not find.
func errorWords(b []byte) (errType, errCode, msg string) {
	type object struct {
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message string          `json:"message"`
		Status  string          `json:"status"`
	}
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(b, &list) != nil || len(list) == 0 {
			return "", "", ""
		}
		b = list[0]
	}
	if json.Unmarshal(b, &env) != nil || len(env.Error) == 0 {
		return "", "", ""
	}
	var o object
	if json.Unmarshal(env.Error, &o) != nil {
		json.Unmarshal(env.Error, &o.Message) // {"error": "text"}
		return "", "", o.Message
	}
	json.Unmarshal(o.Code, &errCode) // a string code; a number is no code
	if o.Type == "" {
		o.Type = o.Status
	}
	return o.Type, errCode, o.Message
}

// replayed is a response body whose first bytes were read ahead.
type replayed struct {
	io.Reader
	rc io.ReadCloser
}

// Close closes the upstream body.
func (r *replayed) Close() error { return r.rc.Close() }
