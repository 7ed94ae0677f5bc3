package wire

import (
	"regexp"
	"strings"
	"testing"
)

var anthropicID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func TestMapID(t *testing.T) {
	long := "call_" + strings.Repeat("x", 80)
	tests := []struct {
		name string
		id   string
		to   API
		want string // "" : hashed, checked by shape
	}{
		{name: "anthropic id to chat unchanged", id: "toolu_01ABC", to: Chat, want: "toolu_01ABC"},
		{name: "openai id to messages unchanged", id: "call_abc-1", to: Messages, want: "call_abc-1"},
		{name: "dots and slashes to messages", id: "fc.1/2", to: Messages},
		{name: "dots kept for responses", id: "fc.1/2", to: Responses, want: "fc.1/2"},
		{name: "long id to responses", id: long, to: Responses},
		{name: "long id to chat", id: long, to: Chat},
		{name: "long safe id to messages unchanged", id: long, to: Messages, want: long},
		{name: "empty id", id: "", to: Messages},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mapID(tt.id, tt.to)
			if tt.want != "" {
				if got != tt.want {
					t.Fatalf("mapID(%q) = %q, want %q", tt.id, got, tt.want)
				}
				return
			}
			if !anthropicID.MatchString(got) || len(got) > 64 || got != mapID(tt.id, tt.to) {
				t.Fatalf("mapID(%q) = %q: not a stable safe id", tt.id, got)
			}
			cut := min(len(tt.id), 55)
			if !strings.HasPrefix(got, strings.Map(func(r rune) rune {
				if r < 128 && safeByte(byte(r)) {
					return r
				}
				return '_'
			}, tt.id[:cut])+"_") || len(got) != cut+9 {
				t.Fatalf("mapID(%q) = %q: want the first 55 bytes, '_' and 8 hex digits", tt.id, got)
			}
		})
	}
}

func TestToolName(t *testing.T) {
	long := strings.Repeat("n", 65)
	tests := []struct {
		name, in, want string
	}{
		{name: "short kept", in: "Bash", want: "Bash"},
		{name: "64 bytes kept", in: strings.Repeat("n", 64), want: strings.Repeat("n", 64)},
		{name: "65 bytes hashed", in: long, want: strings.Repeat("n", 55) + "_" + hashed(long)[56:]},
		{name: "namespace flattened", in: flatName("mcp", "read"), want: "mcp__read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toolName(tt.in, Chat); got != tt.want || len(got) > 64 {
				t.Fatalf("toolName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if h := hashed("abc"); h != "abc_ba7816bf" {
		t.Fatalf("hashed(abc) = %q, want the SHA-256 prefix ba7816bf", h)
	}
}
