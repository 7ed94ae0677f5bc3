package transport

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

func TestErrorWords(t *testing.T) {
	tests := []struct{ body, typ, code, msg string }{
		{`{"error":{"message":"m","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, "insufficient_quota", "insufficient_quota", "m"},
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", "", "Overloaded"},
		{`{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED"}}`, "RESOURCE_EXHAUSTED", "", "Quota exceeded"},
		{` [{"error":{"code":429,"message":"q","status":"RESOURCE_EXHAUSTED"}}]`, "RESOURCE_EXHAUSTED", "", "q"},
		{`{"error":"upstream overloaded"}`, "", "", "upstream overloaded"},
		{`<html>bad gateway</html>`, "", "", ""},
		{``, "", "", ""},
		{`[]`, "", "", ""},
		{`{"error":{"message":"cut`, "", "", ""}, // a body longer than the peek
	}
	for _, tt := range tests {
		typ, code, msg := errorWords([]byte(tt.body))
		if typ != tt.typ || code != tt.code || msg != tt.msg {
			t.Errorf("errorWords(%s) = %q, %q, %q; want %q, %q, %q", tt.body, typ, code, msg, tt.typ, tt.code, tt.msg)
		}
	}
}

// FuzzPeekError: peeking never panics and never changes what the caller
// reads from the body.
func FuzzPeekError(f *testing.F) {
	for _, s := range []string{`{"error":{"type":"insufficient_quota","code":"insufficient_quota"}}`,
		`[{"error":{"status":"RESOURCE_EXHAUSTED"}}]`, `{"error":"x"}`, `{"error":{"code":[1]}}`, "", "null"} {
		f.Add([]byte(s), uint16(0))
	}
	f.Fuzz(func(t *testing.T, body []byte, pad uint16) {
		full := append(append([]byte(nil), body...), bytes.Repeat([]byte(" "), int(pad)%(2*maxPeek))...)
		resp := &http.Response{StatusCode: 429, Body: io.NopCloser(bytes.NewReader(full))}
		peekError(resp)
		got, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(got, full) {
			t.Fatalf("body changed: %q (%v), want %q", got, err, full)
		}
		if resp.Body.Close() != nil {
			t.Fatal("Close failed")
		}
	})
}
