package wire

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The typed values of the one-pass reader: strings, numbers, booleans,
// raw values, keys.

// str reads a string (null: ""); any other value fails, and so does
// invalid UTF-8 (which encoding/json replaces byte by byte).
func (r *jsonReader) str() string {
	switch r.peek() {
	case '"':
		raw := r.strRaw()
		if raw == nil {
			return ""
		}
		return r.lits.decode(raw)
	case 'n':
		r.null()
	default:
		r.fail()
	}
	return ""
}

// strRaw reads a string and returns it with its quotes; nil on failure.
func (r *jsonReader) strRaw() []byte {
	if r.peek() != '"' {
		r.fail()
		return nil
	}
	start := r.i
	_, wide := r.stringEnd()
	if r.bad || wide && !utf8.Valid(r.b[start:r.i]) {
		r.fail()
		return nil
	}
	return r.b[start:r.i]
}

// integer reads an int field (null: 0); a fraction, an exponent or a
// value out of range fails, as encoding/json errs on them.
func (r *jsonReader) integer() int {
	if r.null() || r.bad {
		return 0
	}
	start := r.i
	r.number()
	if r.bad {
		return 0
	}
	n, err := strconv.ParseInt(string(r.b[start:r.i]), 10, 64)
	if err != nil {
		r.fail()
	}
	return int(n)
}

// float reads a *float64 field (null: nil).
func (r *jsonReader) float() *float64 {
	if r.null() || r.bad {
		return nil
	}
	start := r.i
	r.number()
	if r.bad {
		return nil
	}
	f, err := strconv.ParseFloat(string(r.b[start:r.i]), 64)
	if err != nil {
		r.fail()
		return nil
	}
	return &f
}

// boolean reads a bool field (null: false).
func (r *jsonReader) boolean() bool {
	switch r.peek() {
	case 't':
		r.literal("true")
		return true
	case 'f':
		r.literal("false")
	case 'n':
		r.null()
	default:
		r.fail()
	}
	return false
}

// boolPtr reads a *bool field (null: nil).
func (r *jsonReader) boolPtr() *bool {
	if r.null() || r.bad {
		return nil
	}
	v := r.boolean()
	return &v
}

// end checks that nothing but white space follows the document.
func (r *jsonReader) end() {
	if r.peek() != 0 || r.i != len(r.b) {
		r.fail()
	}
}

// keySet is the keys of one object read so far: a key given twice fails
// (encoding/json would merge or overwrite), as do more keys than it holds.
type keySet struct {
	n    int
	keys [24]string
}

// newKey reads the next key of the object and checks it is new.
func (r *jsonReader) newKey(s *keySet) string {
	key := r.key()
	if s.n == len(s.keys) {
		r.fail()
		return ""
	}
	for _, k := range s.keys[:s.n] {
		if k == key {
			r.fail()
			return ""
		}
	}
	s.keys[s.n] = key
	s.n++
	return key
}

// strings reads a list of strings (null: nil).
func (r *jsonReader) strings() []string {
	if !r.array() {
		return nil
	}
	list := []string{}
	for r.next(']') {
		list = append(list, r.str())
	}
	return list
}

// raw reads any value and returns it (a json.RawMessage field).
func (r *jsonReader) raw() json.RawMessage {
	r.peek()
	return r.skip()
}

// read runs read over body as one JSON document, the strings it decodes
// registered in lits; false: it is not read exactly as encoding/json
// would read it.
func read(body []byte, lits literals, read func(r *jsonReader)) bool {
	return readAll(&jsonReader{b: body, lits: lits}, read)
}

// readChecked is read over raw, a value a strict reader has read already
// (or encoding/json has: a json.RawMessage it decoded), such as a
// request's content list read again to decode it.
func readChecked(raw []byte, read func(r *jsonReader)) bool {
	return readAll(&jsonReader{b: raw, checked: true}, read)
}

// readAll runs read over r's bytes as one JSON document.
func readAll(r *jsonReader, read func(r *jsonReader)) bool {
	read(r)
	r.end()
	return !r.bad
}

// fieldNames interns the keys the readers look for: reading one allocates
// nothing.
var fieldNames = func() map[string]string {
	names := map[string]string{}
	for _, known := range []map[string]bool{msgKnown, chatKnown, respKnown} {
		for k := range known {
			names[k] = k
		}
	}
	for _, k := range strings.Fields(`role content type text source title id name input tool_use_id is_error
		signature cache_control media_type data url file_id description input_schema user_id budget_tokens
		disable_parallel_tool_use format effort schema tool_calls tool_call_id refusal function custom
		arguments parameters image_url file file_data filename input_audio include_usage json_schema strict
		call_id namespace output image_url file_url summary encrypted_content`) {
		names[k] = k
	}
	return names
}()

// validJSON is json.Valid for the values it reads; it leaves what it does
// not (very deep nesting) to json.Valid.
func validJSON(b []byte) bool {
	r := jsonReader{b: b}
	r.skip()
	r.end()
	return !r.bad || json.Valid(b)
}
