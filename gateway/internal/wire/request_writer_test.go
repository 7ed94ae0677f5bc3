package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzAppendString holds the string writers to encoding/json: appendString
// writes what json.Marshal writes, byte for byte, and appendJSONText a
// JSON string that decodes to the same text (invalid UTF-8 as U+FFFD),
// with no HTML escape.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain text, long enough for a word", "a\"b\\c\nd\te<f>g&h\x00\x1f\x7f",
		"naïve — 日本 \u2028\u2029 \xff\xfe tail", "12345678\"12345678<12345678\x01", "<<<<<<<<&&&&&&&&>>>>>>>>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("appendString(%q) = %s, json.Marshal: %s", s, got, want)
		}
		text := appendJSONText(nil, s)
		var back, valid string
		_ = json.Unmarshal(want, &valid) // s with each invalid byte as U+FFFD
		if err := json.Unmarshal(text, &back); err != nil || back != valid {
			t.Fatalf("appendJSONText(%q) = %s: decodes to %q (%v)", s, text, back, err)
		}
		if strings.Contains(string(text), `\u003c`) || strings.Contains(string(text), `\u0026`) {
			t.Fatalf("appendJSONText(%q) = %s: HTML-escaped", s, text)
		}
	})
}

// BenchmarkAppendString writes the text of a Claude-Code-sized request's
// system prompt and turns, as the request encoders do.
func BenchmarkAppendString(b *testing.B) {
	req, err := decodeMessages(claudeCodeRequest())
	if err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, p := range req.System {
		texts = append(texts, p.Text)
	}
	for _, m := range req.Messages {
		for _, p := range m.Parts {
			texts = append(texts, p.Text)
			for _, c := range p.Content {
				texts = append(texts, c.Text)
			}
		}
	}
	n := 0
	for _, s := range texts {
		n += len(s)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	buf := make([]byte, 0, 2*n)
	for b.Loop() {
		buf = buf[:0]
		for _, s := range texts {
			buf = appendString(buf, s)
		}
	}
}
