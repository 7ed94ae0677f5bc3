package wire

import (
	"encoding/json"
	"testing"
)

// benchBodies is the Claude-Code-sized history (claudeCodeRequest) on
// each wire: the Messages body and its chat and Responses translations.
func benchBodies(b *testing.B) map[API][]byte {
	b.Helper()
	bodies := map[API][]byte{Messages: claudeCodeRequest()}
	for _, to := range []API{Chat, Responses} {
		tr, err := Translate(Messages, bodies[Messages], Target{API: to, Model: "gpt"})
		if err != nil {
			b.Fatal(err)
		}
		bodies[to] = tr.Body
	}
	return bodies
}

// BenchmarkTranslate translates the same history between wires.
func BenchmarkTranslate(b *testing.B) {
	bodies := benchBodies(b)
	for _, bc := range []struct {
		name     string
		from, to API
	}{
		{name: "messages-chat", from: Messages, to: Chat},
		{name: "chat-messages", from: Chat, to: Messages},
		{name: "responses-messages", from: Responses, to: Messages},
		{name: "messages-responses", from: Messages, to: Responses},
	} {
		b.Run(bc.name, func(b *testing.B) {
			body := bodies[bc.from]
			target := Target{API: bc.to, Model: "up", Family: bc.to == Messages}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Translate(bc.from, body, target); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkValid is the baseline: one json.Valid pass over each body, what
// a same-wire pass-through costs.
func BenchmarkValid(b *testing.B) {
	for api, body := range benchBodies(b) {
		b.Run(api.String(), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if !json.Valid(body) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
