package gateway

import (
	"encoding/json"
	"errors"
	"strconv"
)

// request is what the gateway needs from a chat completions body: where the
// top-level "model" value is (to rewrite it without decoding the rest) and
// whether the client asked for a stream.
type request struct {
	model      string
	modelStart int // byte range of the model value, quotes included
	modelEnd   int
	stream     bool
	prev       string // previous_response_id (Responses)
}

var (
	errNotJSON   = errors.New("the request body is not valid JSON")
	errNotObject = errors.New("the request body must be a JSON object")
	errNoModel   = errors.New("you must provide a model parameter")
	errModelType = errors.New("model must be a string")
	errTwoModels = errors.New("model is given more than once")
)

// scan validates body and finds the fields of a request. It does not
// allocate unless the model name has escapes.
func scan(body []byte) (request, error) {
	if !json.Valid(body) {
		return request{}, errNotJSON
	}
	i := skipSpace(body, 0)
	if body[i] != '{' {
		return request{}, errNotObject
	}
	r := request{modelStart: -1}
	i = skipSpace(body, i+1)
	for body[i] != '}' {
		ks := i
		ke := skipString(body, i)
		i = skipSpace(body, ke)
		i = skipSpace(body, i+1) // ':'
		vs := i
		ve := skipValue(body, i)
		switch string(body[ks:ke]) {
		case `"model"`:
			if r.modelStart >= 0 {
				return request{}, errTwoModels
			}
			if body[vs] != '"' {
				return request{}, errModelType
			}
			r.modelStart, r.modelEnd = vs, ve
			r.model = unquote(body[vs:ve])
		case `"stream"`:
			r.stream = string(body[vs:ve]) == "true"
		case `"previous_response_id"`:
			if body[vs] == '"' {
				r.prev = unquote(body[vs:ve])
			}
		}
		i = skipSpace(body, ve)
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
	}
	if r.modelStart < 0 || r.model == "" {
		return request{}, errNoModel
	}
	return r, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index after the (valid) JSON value starting at i.
func skipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = skipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// unquote decodes a JSON string literal.
func unquote(q []byte) string {
	for _, c := range q[1 : len(q)-1] {
		if c == '\\' {
			var s string
			_ = json.Unmarshal(q, &s)
			return s
		}
	}
	return string(q[1 : len(q)-1])
}

// rewrite appends body to dst with the model value replaced by quoted.
func rewrite(dst, body []byte, r request, quoted []byte) []byte {
	dst = append(dst, body[:r.modelStart]...)
	dst = append(dst, quoted...)
	return append(dst, body[r.modelEnd:]...)
}

// quote returns s as a JSON string literal.
func quote(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}

// ceilSeconds returns d in whole seconds, rounded up, at least 1.
func ceilSeconds(ns int64) string {
	s := (ns + 999_999_999) / 1_000_000_000
	return strconv.FormatInt(max(s, 1), 10)
}
