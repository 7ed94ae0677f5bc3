package wire

import (
	"bytes"
	"encoding/binary"
)

// jsonReader reads a request body in one validating pass, for the fast
// decoders (request_*_read.go). It reads what encoding/json reads the same
// way; anything it does not read exactly as encoding/json would (a syntax
// error, a value of the wrong type, a key that differs from a field name
// only in case, a key given twice) sets bad, and the caller decodes the
// body again with encoding/json, which gives the same result or the same
// error as before.
type jsonReader struct {
	b     []byte
	i     int
	bad   bool
	first bool // the next key or element is the first of its object or array
	depth int  // the nesting skip is in
	// checked: b is a value a strict reader has already read (a request's
	// content list, read a second time to decode it), so its strings are
	// valid JSON: their ends are found without checking their bytes again.
	checked bool
	// lits registers the literals of the strings str decodes (nil: none).
	lits literals
}

// fail marks the body as one for encoding/json.
func (r *jsonReader) fail() { r.bad = true; r.i = len(r.b) }

// peek returns the next byte after white space, 0 at the end.
func (r *jsonReader) peek() byte {
	for r.i < len(r.b) {
		switch c := r.b[r.i]; c {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return c
		}
	}
	return 0
}

// null consumes a null literal when one is next.
func (r *jsonReader) null() bool {
	if r.peek() != 'n' {
		return false
	}
	r.literal("null")
	return !r.bad
}

func (r *jsonReader) literal(lit string) {
	if len(r.b)-r.i < len(lit) || string(r.b[r.i:r.i+len(lit)]) != lit {
		r.fail()
		return
	}
	r.i += len(lit)
}

// object starts an object; false for null (or an error).
func (r *jsonReader) object() bool { return r.open('{') }

// array starts an array; false for null (or an error).
func (r *jsonReader) array() bool { return r.open('[') }

// open starts an object or array, whose first byte is start.
func (r *jsonReader) open(start byte) bool {
	switch r.peek() {
	case start:
		r.i++
		r.first = true
		return true
	case 'n':
		r.null()
	default:
		r.fail()
	}
	return false
}

// next moves to the next key or element of the object or array being
// read (end is '}' or ']'); false at its end.
func (r *jsonReader) next(end byte) bool {
	c := r.peek()
	if c == end {
		r.i++
		r.first = false
		return false
	}
	if !r.first {
		if c != ',' {
			r.fail()
			return false
		}
		r.i++
		c = r.peek()
	}
	r.first = false
	if end == '}' && c != '"' {
		r.fail()
	}
	return !r.bad
}

// key reads an object key and its colon. A key encoding/json could match
// to a field name other than by equality (upper case, non-ASCII, escapes)
// fails: no decoded type here has such a field.
func (r *jsonReader) key() string {
	if r.peek() != '"' {
		r.fail()
		return ""
	}
	start := r.i + 1
	for j := start; j < len(r.b); j++ {
		switch c := r.b[j]; {
		case c == '"':
			r.i = j + 1
			if r.peek() != ':' {
				r.fail()
				return ""
			}
			r.i++
			if k, ok := fieldNames[string(r.b[start:j])]; ok {
				return k
			}
			return string(r.b[start:j])
		case c >= 'A' && c <= 'Z' || c >= 0x80 || c == '\\' || c < 0x20:
			r.fail()
			return ""
		}
	}
	r.fail()
	return ""
}

// skip reads any value and returns it.
func (r *jsonReader) skip() []byte {
	c := r.peek()
	start := r.i
	switch {
	case c == '"':
		r.stringEnd()
	case c == '{' || c == '[':
		r.skipNested(c)
	case c == 't':
		r.literal("true")
	case c == 'f':
		r.literal("false")
	case c == 'n':
		r.literal("null")
	default:
		r.number()
	}
	if r.bad {
		return nil
	}
	return r.b[start:r.i:r.i]
}

// maxSkipDepth is the deepest nesting skip reads; deeper values are left
// to encoding/json and its own limit.
const maxSkipDepth = 9000

// skipNested reads the object or array at r.i.
func (r *jsonReader) skipNested(c byte) {
	r.depth++
	if r.depth > maxSkipDepth {
		r.fail()
		return
	}
	r.i++
	r.first = true
	if c == '{' {
		for r.next('}') {
			r.stringEnd()
			if r.peek() != ':' {
				r.fail()
				return
			}
			r.i++
			r.skip()
		}
	} else {
		for r.next(']') {
			r.skip()
		}
	}
	r.depth--
}

// stringEnd moves past the string at r.i, validating its escapes; it
// reports whether the string held an escape and whether it held a byte
// outside ASCII. bytes.IndexByte, which reads many bytes at a time, finds
// the closing quote and each backslash; the bytes between are checked in
// one tight loop, unless a strict reader has checked them already
// (r.checked: wide is then true, and left to utf8.Valid).
func (r *jsonReader) stringEnd() (escaped, wide bool) {
	b, j := r.b, r.i+1
	q := indexFrom(b, j, '"')
	for q >= 0 {
		seg := b[j:q]
		k := bytes.IndexByte(seg, '\\')
		if k >= 0 {
			seg = seg[:k]
		}
		plain, w := r.checked, r.checked
		if !r.checked {
			plain, w = plainText(seg)
		}
		if !plain {
			r.fail()
			return false, false
		}
		wide = wide || w
		if k < 0 {
			r.i = q + 1
			return escaped, wide
		}
		j += k
		if !validEscape(b[j+1:]) {
			break
		}
		escaped = true
		if j += 2; b[j-1] == 'u' {
			j += 4
		}
		if j > q { // the quote found was escaped
			q = indexFrom(b, j, '"')
		}
	}
	r.fail()
	return false, false
}

// plainText reports whether seg, the text of a string between escapes,
// holds no control character, and whether it holds a byte outside ASCII.
// It reads 8 bytes at a time as one 64-bit word: a byte below 0x20 borrows
// in x - 0x20.. and keeps its high bit clear in x, so it sets its high bit
// in (x - 0x20..) &^ x; a borrow only spreads from such a byte, so the test
// is exact for the word.
func plainText(seg []byte) (plain, wide bool) {
	const lows, highs = 0x2020202020202020, 0x8080808080808080
	var or, ctl uint64
	for len(seg) >= 8 {
		x := binary.LittleEndian.Uint64(seg)
		or |= x
		ctl |= (x - lows) &^ x
		seg = seg[8:]
	}
	for _, c := range seg {
		or |= uint64(c)
		if c < 0x20 {
			ctl = highs
		}
	}
	return ctl&highs == 0, or&highs != 0
}

// indexFrom is the index of the first c in b from i on, -1 if none.
func indexFrom(b []byte, i int, c byte) int {
	if i >= len(b) {
		return -1
	}
	if k := bytes.IndexByte(b[i:], c); k >= 0 {
		return i + k
	}
	return -1
}

func validEscape(esc []byte) bool {
	if len(esc) == 0 {
		return false
	}
	switch esc[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(esc) < 5 {
			return false
		}
		for _, h := range esc[1:5] {
			if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// number moves past a number literal.
func (r *jsonReader) number() {
	b, j := r.b, r.i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case j < len(b) && b[j] >= '1' && b[j] <= '9':
		j = digits(b, j)
	default:
		r.fail()
		return
	}
	if j < len(b) && b[j] == '.' {
		if j+1 >= len(b) || !isDigit(b[j+1]) {
			r.fail()
			return
		}
		j = digits(b, j+1)
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || !isDigit(b[j]) {
			r.fail()
			return
		}
		j = digits(b, j)
	}
	r.i = j
}

func digits(b []byte, j int) int {
	for j < len(b) && isDigit(b[j]) {
		j++
	}
	return j
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
