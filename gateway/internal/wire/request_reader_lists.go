package wire

import "encoding/json"

// The shapes the request readers (request_*_read.go) share: a request's
// top-level object, objects' fields, and lists of objects.

// readRequestKeys reads body, a request's top-level object, and returns
// its keys: field reads a known field and reports true; any other field
// is skipped. The literals of the strings read are registered in lits.
func readRequestKeys(body []byte, lits literals, field func(r *jsonReader, key string) bool) (keys []string, ok bool) {
	ok = read(body, lits, func(r *jsonReader) {
		if r.peek() != '{' || !r.object() {
			r.fail()
			return
		}
		var seen keySet
		for r.next('}') {
			key := r.newKey(&seen)
			keys = append(keys, key)
			if !field(r, key) {
				r.skip()
			}
		}
	})
	return keys, ok
}

// readObjects reads an array of objects (nil for null), size the
// capacity to start with: field reads a known field of one object into
// v and reports true.
func readObjects[T any](r *jsonReader, size int, field func(r *jsonReader, key string, v *T) bool) []T {
	if !r.array() {
		return nil
	}
	list := make([]T, 0, size)
	for r.next(']') {
		list = readObjectIn(r, list, field)
	}
	return list
}

// readObjectIn appends one object (the zero T for null) to list.
func readObjectIn[T any](r *jsonReader, list []T, field func(r *jsonReader, key string, v *T) bool) []T {
	var zero T
	list = append(list, zero)
	if r.object() {
		readInto(r, &list[len(list)-1], field)
	}
	return list
}

// readObject reads an object into a new T; nil for null.
func readObject[T any](r *jsonReader, field func(r *jsonReader, key string, v *T) bool) *T {
	if !r.object() {
		return nil
	}
	v := new(T)
	readInto(r, v, field)
	return v
}

// readInto reads the fields of an object whose '{' is read into v: field
// reads a known field and reports true; any other field is skipped.
func readInto[T any](r *jsonReader, v *T, field func(r *jsonReader, key string, v *T) bool) {
	var seen keySet
	for r.next('}') {
		if !field(r, r.newKey(&seen), v) {
			r.skip()
		}
	}
}

// readList reads raw, a whole array of objects, as readObjects does, and
// with raws each object's bytes.
func readList[T any](raw []byte, size int, withRaws bool, field func(r *jsonReader, key string, v *T) bool) (list []T, raws []json.RawMessage, ok bool) {
	ok = readChecked(raw, func(r *jsonReader) {
		if r.peek() != '[' {
			r.fail()
			return
		}
		list, raws = readListIn(r, size, withRaws, field)
	})
	return list, raws, ok
}

// readListIn is readList on the array at r's position.
func readListIn[T any](r *jsonReader, size int, withRaws bool, field func(r *jsonReader, key string, v *T) bool) (list []T, raws []json.RawMessage) {
	if !r.array() {
		r.fail()
		return nil, nil
	}
	list = make([]T, 0, size)
	if withRaws {
		raws = make([]json.RawMessage, 0, size)
	}
	for r.next(']') {
		r.peek()
		start := r.i
		list = readObjectIn(r, list, field)
		if withRaws {
			raws = append(raws, r.b[start:r.i:r.i])
		}
	}
	return list, raws
}

// readContentIn reads a content value at r's position (a string, a list
// of objects, or null) and returns its bytes, and for a list its objects,
// read in the same pass as readListIn reads them: list is nil unless the
// value is a list. Content can nest (a tool result's content): each list
// counts toward maxSkipDepth.
func readContentIn[T any](r *jsonReader, size int, withRaws bool, field func(r *jsonReader, key string, v *T) bool) (raw json.RawMessage, list []T, raws []json.RawMessage) {
	if r.peek() != '[' {
		return r.raw(), nil, nil
	}
	if r.depth++; r.depth > maxSkipDepth {
		r.fail()
		return nil, nil, nil
	}
	start := r.i
	list, raws = readListIn(r, size, withRaws, field)
	r.depth--
	if r.bad {
		return nil, nil, nil
	}
	return r.b[start:r.i:r.i], list, raws
}

// set, setInt, setBool and setRaw read a field of their type; true, for
// the field functions of readInto.
func (r *jsonReader) set(s *string) bool {
	*s = r.str()
	return true
}

func (r *jsonReader) setInt(n *int) bool {
	*n = r.integer()
	return true
}

func (r *jsonReader) setBool(b *bool) bool {
	*b = r.boolean()
	return true
}

func (r *jsonReader) setRaw(raw *[]byte) bool {
	*raw = r.raw()
	return true
}
