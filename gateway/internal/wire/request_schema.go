package wire

import (
	"bytes"
	"encoding/json"
)

// objectSchema returns a tool's schema as every wire takes it: an object
// schema with "type":"object" (Anthropic answers 400 for an input_schema
// without a type, OpenAI for parameters not of type object). An object
// schema is returned as it is; one without a type gets "type":"object"
// first; a top-level type other than "object" is rewritten to it; the
// rest keeps the client's bytes. No schema, or one that is not a JSON
// object, is an empty object schema.
func objectSchema(raw json.RawMessage) json.RawMessage {
	start := SkipSpace(raw, 0)
	if start >= len(raw) || raw[start] != '{' {
		return emptySchema
	}
	types, typed := schemaTypes(raw, start)
	if !typed {
		out := append(make([]byte, 0, len(raw)+16), `{"type":"object"`...)
		if rest := SkipSpace(raw, start+1); rest < len(raw) && raw[rest] == '"' {
			out = append(out, ',')
		}
		return append(out, raw[start+1:]...)
	}
	if len(types) == 0 {
		return raw
	}
	out := make([]byte, 0, len(raw)+8)
	copied := 0
	for _, span := range types {
		out = append(append(out, raw[copied:span[0]]...), `"object"`...)
		copied = span[1]
	}
	return append(out, raw[copied:]...)
}

// schemaTypes reads the top-level members of the object at start: whether
// it has a "type" key, and the spans of its type values other than
// "object".
func schemaTypes(raw []byte, start int) (other [][2]int, typed bool) {
	i := SkipSpace(raw, start+1)
	for i < len(raw) && raw[i] == '"' {
		keyEnd := SkipString(raw, i)
		v := SkipSpace(raw, SkipSpace(raw, keyEnd)+1)
		if v >= len(raw) {
			break
		}
		end := SkipValue(raw, v)
		if jsonStringIs(raw[i:keyEnd], "type") {
			typed = true
			if !jsonStringIs(raw[v:end], "object") {
				other = append(other, [2]int{v, end})
			}
		}
		i = SkipSpace(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i = SkipSpace(raw, i+1)
		}
	}
	return other, typed
}

// jsonStringIs reports whether the JSON value b is the string s.
func jsonStringIs(b []byte, s string) bool {
	if len(b) < 2 || b[0] != '"' {
		return false
	}
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b[1:len(b)-1]) == s
	}
	var got string
	return json.Unmarshal(b, &got) == nil && got == s
}
