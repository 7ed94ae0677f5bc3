package wire

import "bytes"

// Server-sent event parsing and framing for the stream transcoder.

// sseEvent is one server-sent event: its event name and its data.
type sseEvent struct {
	name string // the event: field; "" when absent
	// data is the event's data lines joined by "\n"; nil when it has none
	// (a comment or keep-alive).
	data []byte
}

// parseSSE reads one complete event: its lines up to the blank line. A
// single data line is returned without copying.
func parseSSE(ev []byte) sseEvent {
	var e sseEvent
	joined := false
	for len(ev) > 0 {
		var line []byte
		line, ev = cutLine(ev)
		line = bytes.TrimSuffix(line, []byte{'\r'})
		field, value := sseField(line)
		switch field {
		case "event":
			e.name = string(value)
		case "data":
			if e.data == nil {
				e.data = value
				continue
			}
			if !joined {
				e.data = append([]byte(nil), e.data...)
				joined = true
			}
			e.data = append(append(e.data, '\n'), value...)
		}
	}
	return e
}

// cutLine splits ev into its first line (without its "\n") and the rest;
// the rest is nil after the last line.
func cutLine(ev []byte) (line, rest []byte) {
	if i := bytes.IndexByte(ev, '\n'); i >= 0 {
		return ev[:i], ev[i+1:]
	}
	return ev, nil
}

// sseField splits a line into its field name and value (one leading space
// of the value dropped). A comment line has the field "".
func sseField(line []byte) (string, []byte) {
	if len(line) == 0 || line[0] == ':' {
		return "", nil
	}
	i := bytes.IndexByte(line, ':')
	if i < 0 {
		return string(line), []byte{}
	}
	value := line[i+1:]
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(line[:i]) {
	case "event":
		return "event", value
	case "data":
		return "data", value
	}
	return "", nil
}

// isChatDone reports whether data is chat's end marker, [DONE].
func isChatDone(data []byte) bool {
	return string(bytes.TrimSpace(data)) == "[DONE]"
}

// appendNamedEvent frames data as "event: <name>\ndata: <data>\n\n"
// (Messages and Responses).
func appendNamedEvent(dst []byte, name string, data []byte) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// appendDataEvent frames data as "data: <data>\n\n" (chat).
func appendDataEvent(dst, data []byte) []byte {
	dst = append(dst, "data: "...)
	dst = append(dst, data...)
	return append(dst, "\n\n"...)
}

// sseHex is the digits of a \u00XX escape.
const sseHex = "0123456789abcdef"

// appendRuneEscape appends U+FFFD for an invalid byte, or the \u escape
// of a line or paragraph separator.
func appendRuneEscape(dst []byte, r rune) []byte {
	switch r {
	case '\u2028':
		return append(dst, `\u2028`...)
	case '\u2029':
		return append(dst, `\u2029`...)
	}
	return append(dst, `\ufffd`...)
}
