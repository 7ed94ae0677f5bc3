package wire

import (
	"bytes"
	"encoding/json"
)

// What the three request decoders share: the request object read in one
// pass or by encoding/json, and content that is a string or a list.

// readRequestObject reads body into in with fast, the one-pass reader,
// which registers the literals of the strings it reads in lits, or with
// encoding/json where fast cannot; it returns the top-level keys.
func readRequestObject[T any](body []byte, in *T, lits literals, fast func([]byte, *T, literals) ([]string, bool)) ([]string, error) {
	keys, ok := fast(body, in, lits)
	if ok {
		return keys, nil
	}
	clear(lits) // the strings of the read given up
	var zero T
	*in = zero
	if err := json.Unmarshal(body, in); err != nil {
		return nil, requestError(err)
	}
	return topLevelKeys(body), nil
}

// contentNamed reports whether content read from raw can be rejected, and
// so needs its param named: a list or a value of another type can, a
// string or null cannot.
func contentNamed(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return isSetJSON(raw) && raw[0] != '"'
}

// contentList decodes content: nothing for null, one text part for a
// string (its literal registered in lits), or for a list its elements,
// read by fast (with each one's bytes where fast gives them) or, where
// fast cannot, by encoding/json (without); an error names param. list is
// nil unless content is a list.
func contentList[T any](raw json.RawMessage, lits literals, param string, fast func([]byte) ([]T, []json.RawMessage, bool)) (text []Part, list []T, raws []json.RawMessage, err error) {
	raw = bytes.TrimSpace(raw)
	if !isSetJSON(raw) {
		return nil, nil, nil, nil
	}
	if raw[0] == '"' {
		return []Part{{Kind: Text, Text: lits.decode(raw)}}, nil, nil, nil
	}
	list, raws, ok := fast(raw)
	if ok {
		return nil, list, raws, nil
	}
	var decoded []T // declared here: on the heap only on this path
	if err := json.Unmarshal(raw, &decoded); err != nil {
		return nil, nil, nil, &RequestError{Param: param, Message: "invalid " + param + ": " + err.Error()}
	}
	return nil, decoded, nil, nil
}

// contentParts decodes content as contentList does, each element of a
// list appended to the parts by partIn: list, when the fast reader has
// read raw's elements already (readContentIn), or raw.
func contentParts[T any](req *Request, raw json.RawMessage, list []T, param string, fast func([]byte) ([]T, []json.RawMessage, bool),
	partIn func(req *Request, parts []Part, v T) []Part) ([]Part, error) {
	if list == nil {
		var text []Part
		var err error
		if text, list, _, err = contentList(raw, req.lits, param, fast); list == nil {
			return text, err
		}
	}
	parts := make([]Part, 0, len(list))
	for _, v := range list {
		parts = partIn(req, parts, v)
	}
	return parts, nil
}
