package wire

import (
	"errors"
	"testing"
)

func TestSkippedAgreesWithTranslate(t *testing.T) {
	for _, tc := range []struct {
		name string
		from API
		body string
		want string
	}{
		{"plain chat", Chat, `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, ""},
		{"chat n=2", Chat, `{"model":"m","n":2,"messages":[{"role":"user","content":"hi"}]}`, "n"},
		{"chat logprobs", Chat, `{"model":"m","logprobs":true,"messages":[{"role":"user","content":"hi"}]}`, "logprobs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Skipped(tc.from, []byte(tc.body))
			if err != nil || got != tc.want {
				t.Fatalf("Skipped = %q, %v; want %q", got, err, tc.want)
			}
			_, terr := Translate(tc.from, []byte(tc.body), Target{API: Messages, Model: "x", DefaultMaxTokens: 100})
			var ue *UnsupportedError
			if isSkip := errors.As(terr, &ue); isSkip != (tc.want != "") || isSkip && ue.Field != tc.want {
				t.Fatalf("Translate = %v, which disagrees with Skipped %q", terr, got)
			}
		})
	}
	if _, err := Skipped(Chat, []byte(`{`)); !errors.As(err, new(*RequestError)) {
		t.Fatalf("Skipped of a bad body = %v, want a *RequestError", err)
	}
}
