package wire

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Appending JSON the way encoding/json.Marshal writes it: strings with its
// HTML escaping, floats in its format; raw values as they came. The
// request encoders write their bodies with these.

// jsonEscapes says, for each ASCII byte, how a JSON string writer writes
// it: 0 as it is, 'u' as \u00XX, any other byte b as a backslash and b.
type jsonEscapes [utf8.RuneSelf]byte

// htmlEscapes is how encoding/json.Marshal writes ASCII (its HTML
// escaping included); textEscapes is how the stream encoders write it:
// no HTML escaping, and \b, \f as \u0008, \u000c.
var htmlEscapes, textEscapes = func() (html, text jsonEscapes) {
	for c := range utf8.RuneSelf {
		if c < 0x20 {
			html[c], text[c] = 'u', 'u'
		}
	}
	html['"'], html['\\'], html['\b'], html['\f'], html['\n'], html['\r'], html['\t'] = '"', '\\', 'b', 'f', 'n', 'r', 't'
	html['<'], html['>'], html['&'] = 'u', 'u', 'u'
	text['"'], text['\\'], text['\n'], text['\r'], text['\t'] = '"', '\\', 'n', 'r', 't'
	return html, text
}()

// appendString appends s as encoding/json writes a string.
func appendString(dst []byte, s string) []byte {
	return appendQuoted(dst, s, &htmlEscapes)
}

// appendJSONText appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, as
// encoding/json writes it (without its HTML escaping).
func appendJSONText(dst []byte, s string) []byte {
	return appendQuoted(dst, s, &textEscapes)
}

// appendQuoted appends s as a JSON string, ASCII escaped as esc says,
// invalid UTF-8 as U+FFFD and U+2028, U+2029 as \u escapes.
func appendQuoted(dst []byte, s string, esc *jsonEscapes) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			e := esc[c]
			if e == 0 {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			if e == 'u' {
				dst = append(dst, '\\', 'u', '0', '0', sseHex[c>>4], sseHex[c&0xF])
			} else {
				dst = append(dst, '\\', e)
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = appendRuneEscape(dst, r)
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendText appends s as appendString does, or lit, the JSON literal the
// request's reader decoded s from (literals.go), as it is.
func appendText(dst []byte, s string, lit []byte) []byte {
	if lit != nil {
		return append(dst, lit...)
	}
	return appendString(dst, s)
}

// appendRaw appends a valid JSON value as it is: a request's raw values
// (tool schemas, tool inputs, blocks kept whole) reach the upstream with
// the client's own spelling, white space and escapes, as a same-wire
// request does.
func appendRaw(dst, raw []byte) []byte {
	return append(dst, raw...)
}

// appendFloat appends f as encoding/json writes a float64.
func appendFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// Fields of an object after its first: ,"key":value. Those named ...Opt
// leave out an empty value, as omitempty does.

func appendKey(dst []byte, key string) []byte {
	dst = append(dst, ',', '"')
	dst = append(dst, key...)
	return append(dst, '"', ':')
}

func appendStringField(dst []byte, key, value string) []byte {
	return appendString(appendKey(dst, key), value)
}

func appendStringOpt(dst []byte, key, value string) []byte {
	if value == "" {
		return dst
	}
	return appendString(appendKey(dst, key), value)
}

func appendTextOpt(dst []byte, key, value string, lit []byte) []byte {
	if value == "" {
		return dst
	}
	return appendText(appendKey(dst, key), value, lit)
}

func appendRawOpt(dst []byte, key string, raw []byte) []byte {
	if len(raw) == 0 {
		return dst
	}
	return appendRaw(appendKey(dst, key), raw)
}

func appendIntOpt(dst []byte, key string, n int) []byte {
	if n == 0 {
		return dst
	}
	return strconv.AppendInt(appendKey(dst, key), int64(n), 10)
}

func appendFloatOpt(dst []byte, key string, f *float64) []byte {
	if f == nil {
		return dst
	}
	return appendFloat(appendKey(dst, key), *f)
}

func appendBoolPtrOpt(dst []byte, key string, b *bool) []byte {
	if b == nil {
		return dst
	}
	return strconv.AppendBool(appendKey(dst, key), *b)
}

func appendTrueOpt(dst []byte, key string, b bool) []byte {
	if !b {
		return dst
	}
	return append(appendKey(dst, key), "true"...)
}

func appendStringsOpt(dst []byte, key string, list []string) []byte {
	if len(list) == 0 {
		return dst
	}
	return appendList(appendKey(dst, key), list, func(dst []byte, s *string) []byte { return appendString(dst, *s) })
}

// appendList appends list as a JSON array, each element written by elem.
func appendList[T any](dst []byte, list []T, elem func(dst []byte, v *T) []byte) []byte {
	dst = append(dst, '[')
	for i := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = elem(dst, &list[i])
	}
	return append(dst, ']')
}

// appendListOrNull appends list as appendList does, or null for a nil
// list, as encoding/json writes a slice.
func appendListOrNull[T any](dst []byte, list []T, elem func(dst []byte, v *T) []byte) []byte {
	if list == nil {
		return append(dst, "null"...)
	}
	return appendList(dst, list, elem)
}

// appendOneFieldObject appends the field key, an object of one string
// field left out when empty: ,"key":{"field":value}.
func appendOneFieldObject(dst []byte, key, field, value string) []byte {
	dst = append(appendKey(dst, key), '{')
	if value != "" {
		dst = append(append(append(dst, '"'), field...), '"', ':')
		dst = appendString(dst, value)
	}
	return append(dst, '}')
}

// appendTypeObject starts an object with its "type" field.
func appendTypeObject(dst []byte, typ string) []byte {
	dst = append(dst, `{"type":`...)
	return appendString(dst, typ)
}
