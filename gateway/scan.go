package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
)

// request is what the gateway needs from a request body on any endpoint:
// where the top-level "model" value is (to rewrite it without decoding the
// rest), whether the client asked for a stream, a Responses request's
// previous_response_id, and the fields a session key may come from (read
// in the same pass, so that a pool's affinity costs no second scan).
type request struct {
	model      string
	modelStart int // byte range of the model value, quotes included
	modelEnd   int
	stream     bool
	prev       string        // previous_response_id (Responses)
	session    sessionFields // views of the body, never logged (session.go)
}

var (
	errNotJSON   = errors.New("the request body is not valid JSON")
	errNotObject = errors.New("the request body must be a JSON object")
	errNoModel   = errors.New("you must provide a model parameter")
	errModelType = errors.New("model must be a string")
	errTwoModels = errors.New("model is given more than once")
	// errModelName: a model name the gateway will not route (too long, or
	// not printable text).
	errModelName = fmt.Errorf("model must be at most %d bytes of printable text", MaxModelName)
	// errKeySpelling: a top-level key that an upstream's decoder reads as
	// "model" or "stream" (JSON escapes decoded, case folded) but that is not
	// spelled exactly so.
	errKeySpelling = errors.New("a top-level key is spelled differently from the field it names")
)

// MaxModelName is the longest model name, in bytes, a request may carry.
const MaxModelName = 256

// keyError is errKeySpelling naming the key.
type keyError struct{ key, field string }

func (e *keyError) Error() string {
	return fmt.Sprintf("the key %s reads as %q to an upstream: write it exactly as %q", strconv.QuoteToASCII(e.key), e.field, e.field)
}

func (e *keyError) Is(target error) bool { return target == errKeySpelling }

// scan finds the fields of a request, reading its
// top-level keys as an upstream will: JSON escapes decoded, and a key that
// matches "model" or "stream" only once escapes are decoded or case is
// folded (as Go's encoding/json does) is an error, since the gateway and the
// upstream would read the request differently. The model name must be at
// most [MaxModelName] bytes of printable text. scan does not allocate unless
// a key or the model name has escapes.
// scan reads only the top-level object: whether the rest is valid JSON is
// checked by the caller (json.Valid, or the translator, which checks a
// body as it reads it); any error scan finds in a body that is not valid
// JSON is errNotJSON.
func scan(body []byte) (request, error) {
	r, err := scanTop(body)
	if err != nil && err != errNotJSON && !json.Valid(body) {
		return request{}, errNotJSON
	}
	return r, err
}

// scanTop is scan on a body not yet known to be valid JSON: every index is
// checked, and a break in the top-level object's structure is errNotJSON.
func scanTop(body []byte) (request, error) {
	i := wire.SkipSpace(body, 0)
	if i == len(body) || body[i] != '{' {
		if i < len(body) && json.Valid(body) {
			return request{}, errNotObject
		}
		return request{}, errNotJSON
	}
	r := request{modelStart: -1}
	for i = wire.SkipSpace(body, i+1); i < len(body) && body[i] != '}'; {
		ks, ke, vs, ve, ok := member(body, i)
		if !ok {
			return request{}, errNotJSON
		}
		if err := r.field(body, ks, ke, vs, ve); err != nil {
			return request{}, err
		}
		i = wire.SkipSpace(body, ve)
		if i < len(body) && body[i] == ',' {
			if i = wire.SkipSpace(body, i+1); i < len(body) && body[i] == '}' {
				return request{}, errNotJSON
			}
		} else if i < len(body) && body[i] != '}' {
			return request{}, errNotJSON
		}
	}
	if i == len(body) {
		return request{}, errNotJSON
	}
	if r.modelStart < 0 || r.model == "" {
		return request{}, errNoModel
	}
	if !validModelName(r.model) {
		return request{model: r.model, stream: r.stream}, errModelName // the name, for the log
	}
	return r, nil
}

// member finds the key (ks:ke) and value (vs:ve) of the object member at
// body[i]; false when they are not there whole.
func member(body []byte, i int) (ks, ke, vs, ve int, ok bool) {
	if body[i] != '"' {
		return
	}
	ks, ke = i, wire.SkipString(body, i)
	if ke > len(body) || ke-ks < 2 || body[ke-1] != '"' {
		return
	}
	i = wire.SkipSpace(body, ke)
	if i == len(body) || body[i] != ':' {
		return
	}
	if vs = wire.SkipSpace(body, i+1); vs == len(body) {
		return
	}
	ve = wire.SkipValue(body, vs)
	return ks, ke, vs, ve, ve <= len(body) && ve > vs
}

// field reads one top-level member into r: model, stream,
// previous_response_id, a session field, or a key misspelling model or
// stream. A key given twice takes its last value, as the upstreams'
// decoders do.
func (r *request) field(body []byte, ks, ke, vs, ve int) error {
	switch field := keyField(body[ks:ke]); field {
	case "model":
		if r.modelStart >= 0 {
			return errTwoModels
		}
		if body[vs] != '"' || ve-vs < 2 || body[ve-1] != '"' {
			return errModelType
		}
		r.modelStart, r.modelEnd = vs, ve
		r.model = unquote(body[vs:ve])
	case "stream":
		r.stream = string(body[vs:ve]) == "true"
	case "previous_response_id":
		if body[vs] == '"' && ve-vs >= 2 {
			r.prev = unquote(body[vs:ve])
		}
	case "metadata":
		r.session.userID = metadataUserID(body, vs, ve)
	case "prompt_cache_key":
		r.session.cacheKey = sessionKey(body[vs:ve])
	case "user":
		r.session.user = sessionKey(body[vs:ve])
	case "":
	default:
		return &keyError{key: unquote(body[ks:ke]), field: field[1:]}
	}
	return nil
}

// keyField tells what a top-level key (a JSON string literal) is to the
// gateway: its name when it is one the gateway reads, spelled exactly so
// (model, stream, previous_response_id, and the session fields metadata,
// prompt_cache_key and user); "!model" or "!stream" when it reads as one
// of those two only with escapes decoded or case folded; "" otherwise.
func keyField(q []byte) string {
	switch string(q) {
	case `"model"`:
		return "model"
	case `"stream"`:
		return "stream"
	case `"previous_response_id"`:
		return "previous_response_id"
	case `"metadata"`:
		return "metadata"
	case `"prompt_cache_key"`:
		return "prompt_cache_key"
	case `"user"`:
		return "user"
	}
	if len(q) > 2+6*len("stream") { // longer than any spelling of them, escapes included
		return ""
	}
	k := q[1 : len(q)-1]
	if bytes.IndexByte(k, '\\') >= 0 {
		k = []byte(unquote(q))
	}
	switch {
	case bytes.EqualFold(k, []byte("model")):
		return "!model"
	case bytes.EqualFold(k, []byte("stream")):
		return "!stream"
	}
	return ""
}

// validModelName reports whether s is a model name the gateway routes: at
// most MaxModelName bytes of valid UTF-8 without control or other
// non-printable characters (nothing that could reach a header or a log raw).
func validModelName(s string) bool {
	if len(s) > MaxModelName {
		return false
	}
	for _, c := range []byte(s) {
		if c < 0x20 || c >= 0x7f {
			return validModelRunes(s)
		}
	}
	return true
}

func validModelRunes(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, c := range s {
		if !unicode.IsPrint(c) {
			return false
		}
	}
	return true
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

// ceilSeconds returns ns nanoseconds in whole seconds, rounded up, at least 1.
func ceilSeconds(ns int64) string {
	s := (ns + 999_999_999) / 1_000_000_000
	return strconv.FormatInt(max(s, 1), 10)
}
