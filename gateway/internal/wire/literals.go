package wire

import "unsafe"

// literals maps the strings a request's readers decoded from JSON string
// literals to those literals' bytes (quotes included), so that an encoder
// writing such a string unchanged copies its literal instead of escaping
// the decoded string again. One table serves one translation (it lives on
// the Request): no state is shared between requests.
//
// A string is known by its data pointer and length, never by its text: a
// string the encoder built (a prefix added, texts joined) lives elsewhere,
// and a substring (strings.TrimSpace, strings.CutPrefix) has another
// pointer or length, so neither is taken for the string it came from. The
// key holds the string's memory, which therefore cannot be reused while
// the table lives.
//
// Only literals that decode exactly are registered: none whose invalid
// UTF-8 or lone surrogate escape became U+FFFD, which an upstream's
// decoder might read otherwise. A nil table registers and finds nothing.
type literals map[literalKey][]byte

type literalKey struct {
	data *byte
	len  int
}

// minLiteral is the shortest string registered: below it the table costs
// more than escaping saves.
const minLiteral = 64

// decode decodes raw, a valid JSON string literal, as rawString does, and
// registers raw as the literal of the string when it decodes exactly.
func (l literals) decode(raw []byte) string {
	s, exact := rawString(raw)
	if exact && l != nil && len(s) >= minLiteral {
		l[literalKey{unsafe.StringData(s), len(s)}] = raw
	}
	return s
}

// of returns the literal s was decoded from, nil when s was not read
// from one (or was built or cut since).
func (l literals) of(s string) []byte {
	if l == nil || len(s) < minLiteral {
		return nil
	}
	return l[literalKey{unsafe.StringData(s), len(s)}]
}

// lit returns the literal s was decoded from, nil when s was not read
// from one or was built or cut since: what an encoder writes beside s.
func (e *encoding) lit(s string) []byte { return e.req.lits.of(s) }

// joinedText is joinText(parts) and its literal: the parts' literals, or
// their text escaped where a part has none, joined with \n\n; nil when
// no part has a literal.
func (e *encoding) joinedText(parts []Part) (string, []byte) {
	text := joinText(parts)
	if len(parts) == 1 {
		return text, e.lit(text)
	}
	some := false
	for _, p := range parts {
		some = some || e.lit(p.Text) != nil
	}
	if !some {
		return text, nil
	}
	lit := make([]byte, 1, len(text)+len(text)/8+2)
	lit[0] = '"'
	for i, p := range parts {
		if i > 0 {
			lit = append(lit, `\n\n`...)
		}
		if l := e.lit(p.Text); l != nil {
			lit = append(lit, l[1:len(l)-1]...)
		} else {
			n := len(lit)
			lit = appendString(lit, p.Text)
			lit = append(lit[:n], lit[n+1:len(lit)-1]...) // without its quotes
		}
	}
	return text, append(lit, '"')
}
