package wire

import "bytes"

// Skipping over raw JSON without decoding it, for the gateway's request scan
// (its model, stream and previous_response_id) and the translator's list of
// a body's top-level keys. Each takes valid JSON.

// SkipSpace returns the index of the first byte from i of b that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// SkipString returns the index after the string starting at b[i] == '"',
// or len(b)+1 when the string does not end. bytes.IndexByte finds each
// quote many bytes at a time; a quote after an odd run of backslashes is
// escaped, since a run of backslashes pairs up from its first.
func SkipString(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		q, n := j+k, 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1
		}
		j = q + 1
	}
	return len(b) + 1
}

// SkipValue returns the index after the (valid) JSON value starting at i.
func SkipValue(b []byte, i int) int {
	switch b[i] {
	case '"':
		return SkipString(b, i)
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				i = SkipString(b, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
