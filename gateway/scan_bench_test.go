package gateway

import (
	"strings"
	"testing"
)

// claudeCodeBody is a Messages body shaped as Claude Code sends one: a
// system prompt and tool definitions behind cache_control breakpoints, a
// conversation of turns (the last user turn marked too), and its session
// in metadata.user_id. turns sets its length.
func claudeCodeBody(turns int) string {
	var b strings.Builder
	b.WriteString(`{"model":"claude-sonnet-4-5","max_tokens":32000,"stream":true,`)
	b.WriteString(`"system":[{"type":"text","text":"You are Claude Code, Anthropic's official CLI for Claude.","cache_control":{"type":"ephemeral"}},`)
	b.WriteString(`{"type":"text","text":"` + strings.Repeat("Follow the repository's conventions. ", 200) + `","cache_control":{"type":"ephemeral"}}],`)
	b.WriteString(`"tools":[`)
	for i := range 12 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"name":"Tool` + string(rune('A'+i)) + `","description":"` + strings.Repeat("Does one thing well. ", 20) +
			`","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}`)
	}
	b.WriteString(`],"messages":[`)
	for i := range turns {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("please look at this file ", 10) + `"}]},`)
		b.WriteString(`{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("here is what I found ", 20) + `"}]}`)
	}
	b.WriteString(`,{"role":"user","content":[{"type":"text","text":"now fix it","cache_control":{"type":"ephemeral"}}]}`)
	b.WriteString(`,{"role":"user","content":"and run the tests"}`)
	b.WriteString(`],"metadata":{"user_id":"user_3f2a9c_account_7d1e_session_0b6c4d2e-1a2b-4c3d-8e9f-001122334455"}}`)
	return b.String()
}

// The scan pass on the bodies of the wires' usual clients: no allocation
// beyond what a body with escapes needs.
func BenchmarkScan(b *testing.B) {
	for _, bc := range []struct{ name, body string }{
		{"chat", `{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}],"stream":true}`},
		{"chat-session", `{"model":"gpt-4.1","messages":[{"role":"user","content":"hi"}],"prompt_cache_key":"conv-42","user":"u-7","stream":true}`},
		{"claude-code", claudeCodeBody(20)},
	} {
		body := []byte(bc.body)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := scan(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
