package wire

import "testing"

// skipStringBytes is SkipString's reference: byte by byte, a backslash
// escaping the byte after it.
func skipStringBytes(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b) + 1
}

// FuzzSkipString holds SkipString to its reference on any bytes, from
// every quote.
func FuzzSkipString(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"a\\"b"`, `"a\\\"b"`, `"\\\\"`, `"abc`, `"a\"`, `"a\`, `""`, `"x" "y"`,
		`{"k":"v\\\\\"w","n":[1,"\"]"]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for i, c := range b {
			if c != '"' {
				continue
			}
			if got, want := SkipString(b, i), skipStringBytes(b, i); got != want {
				t.Fatalf("SkipString(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	})
}
