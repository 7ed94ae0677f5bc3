package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Request helpers over raw JSON: the top-level field names of a body, the
// estimate of its input tokens, and built-in tool history as plain text.

// topLevelKeys returns the field names of the JSON object body, which the
// caller has already decoded (it is valid JSON). Names are unescaped only
// when they hold a backslash.
func topLevelKeys(body []byte) []string {
	i := SkipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil
	}
	var keys []string
	i++
	for {
		i = SkipSpace(body, i)
		if i >= len(body) || body[i] != '"' {
			return keys
		}
		end := SkipString(body, i)
		key := string(body[i+1 : end-1])
		if strings.IndexByte(key, '\\') >= 0 {
			_ = json.Unmarshal(body[i:end], &key)
		}
		keys = append(keys, key)
		i = SkipSpace(body, end)
		i = SkipValue(body, SkipSpace(body, i+1)) // past ':' and the value
		i = SkipSpace(body, i)
		if i >= len(body) || body[i] != ',' {
			return keys
		}
		i++
	}
}

// estimateTokens estimates a request's input tokens: the bytes of its text
// (system, messages, tool inputs and results, tool definitions) / 4,
// rounded up, plus 1,000 per image or document.
func estimateTokens(req *Request) int {
	n, media := partsSize(req.System)
	for _, m := range req.Messages {
		b, k := partsSize(m.Parts)
		n, media = n+b, media+k
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Schema)
	}
	return (n+3)/4 + 1000*media
}

func partsSize(parts []Part) (size, media int) {
	for _, p := range parts {
		size += len(p.Text) + len(p.Name) + len(p.Input)
		if p.Kind == Image || p.Kind == File {
			media++
		}
		b, k := partsSize(p.Content)
		size, media = size+b, media+k
	}
	return size, media
}

// maxBuiltinText is the most of a built-in tool item kept as text.
const maxBuiltinText = 2000

// builtinText is a built-in tool item of a history (a web_search_call, a
// server_tool_use or its result) as a short text part: its kind and what
// it found, without ids or encrypted content.
func builtinText(kind string, raw json.RawMessage) Part {
	var found struct {
		Action  *struct{ Query, URL string } `json:"action"`
		Query   string                       `json:"query"`
		Queries []string                     `json:"queries"`
		Code    string                       `json:"code"`
		Output  json.RawMessage              `json:"output"`
		Content json.RawMessage              `json:"content"`
		Input   json.RawMessage              `json:"input"`
		Results []builtinResult              `json:"results"`
	}
	_ = json.Unmarshal(raw, &found)
	var b strings.Builder
	b.WriteString("[" + kind + "]")
	if found.Action != nil {
		found.Query += found.Action.Query + found.Action.URL
	}
	writeField(&b, "query", found.Query)
	writeField(&b, "queries", strings.Join(found.Queries, "; "))
	writeField(&b, "code", found.Code)
	writeRaw(&b, "input", found.Input)
	writeRaw(&b, "output", found.Output)
	if !writeResults(&b, found.Content) {
		writeRaw(&b, "content", found.Content)
	}
	for _, r := range found.Results {
		writeField(&b, "result", r.line())
	}
	text := b.String()
	if len(text) > maxBuiltinText {
		text = strings.ToValidUTF8(text[:maxBuiltinText], "") + "…"
	}
	return Part{Kind: Text, Text: text}
}

// builtinResult is one result of a search: web, file or Anthropic's.
type builtinResult struct {
	Title    string `json:"title"`
	URL      string `json:"url"`
	Filename string `json:"filename"`
	Text     string `json:"text"`
}

func (r builtinResult) line() string {
	return strings.TrimSpace(strings.Join([]string{r.Title, r.URL, r.Filename, r.Text}, " "))
}

func writeField(b *strings.Builder, name, value string) {
	if value != "" {
		b.WriteString("\n" + name + ": " + value)
	}
}

// writeRaw writes a JSON value: a string as it is, anything else compact.
func writeRaw(b *strings.Builder, name string, raw json.RawMessage) {
	raw = bytes.TrimSpace(raw)
	if !isSetJSON(raw) {
		return
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		writeField(b, name, s)
		return
	}
	var c bytes.Buffer
	if json.Compact(&c, raw) == nil {
		writeField(b, name, c.String())
	}
}

// writeResults writes a list of search results; false if raw is not one.
func writeResults(b *strings.Builder, raw json.RawMessage) bool {
	var results []builtinResult
	if json.Unmarshal(raw, &results) != nil || len(results) == 0 {
		return false
	}
	for _, r := range results {
		writeField(b, "result", r.line())
	}
	return true
}

// rawString decodes a JSON string the caller knows is valid JSON (a
// json.RawMessage field of a decoded body), as encoding/json would: escapes
// decoded, a lone surrogate or invalid UTF-8 as U+FFFD. It spares long
// prompts and tool results a second validation pass. exact is false when
// a character was replaced by U+FFFD: raw then decodes otherwise in a
// decoder that keeps what encoding/json replaces.
func rawString(raw []byte) (s string, exact bool) {
	inner := raw[1 : len(raw)-1]
	var out []byte
	exact = true
	for {
		j := bytes.IndexByte(inner, '\\')
		if j < 0 {
			break
		}
		if out == nil {
			out = make([]byte, 0, len(inner))
		}
		out = append(out, inner[:j]...)
		var n int
		var ok bool
		out, n, ok = appendEscape(out, inner[j:])
		exact = exact && ok
		inner = inner[j+n:]
	}
	if out == nil && utf8.Valid(inner) {
		return string(inner), true
	}
	out = append(out, inner...)
	if !utf8.Valid(out) {
		return replaceInvalid(out), false
	}
	// out is never written again: the string shares its bytes rather than
	// copying them a second time.
	return unsafe.String(unsafe.SliceData(out), len(out)), exact
}

// replaceInvalid is b with each byte of invalid UTF-8 as U+FFFD, as
// encoding/json decodes it (strings.ToValidUTF8 would replace a run of
// such bytes with one).
func replaceInvalid(b []byte) string {
	out := make([]byte, 0, len(b)+len(b)/2)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, r)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return string(out)
}

// appendEscape appends the character of the escape at the start of esc
// and returns how many bytes it took; ok is false for a lone surrogate,
// appended as U+FFFD.
func appendEscape(out, esc []byte) (_ []byte, n int, ok bool) {
	if len(esc) < 2 {
		return out, len(esc), true
	}
	switch c := esc[1]; c {
	case 'b':
		return append(out, '\b'), 2, true
	case 'f':
		return append(out, '\f'), 2, true
	case 'n':
		return append(out, '\n'), 2, true
	case 'r':
		return append(out, '\r'), 2, true
	case 't':
		return append(out, '\t'), 2, true
	case 'u':
		r, n, ok := escapedRune(esc)
		return utf8.AppendRune(out, r), n, ok
	default: // '"', '\\', '/'
		return append(out, c), 2, true
	}
}

// escapedRune decodes \uXXXX, joining a surrogate pair; ok is false for a
// lone surrogate, decoded as U+FFFD.
func escapedRune(esc []byte) (r rune, n int, ok bool) {
	r = hexRune(esc[2:])
	if !utf16.IsSurrogate(r) {
		return r, 6, true
	}
	if len(esc) >= 12 && esc[6] == '\\' && esc[7] == 'u' {
		if pair := utf16.DecodeRune(r, hexRune(esc[8:])); pair != utf8.RuneError {
			return pair, 12, true
		}
	}
	return utf8.RuneError, 6, false
}

func hexRune(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
