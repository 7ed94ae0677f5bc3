package wire

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"testing"
)

var anthropicID = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

func TestMapID(t *testing.T) {
	long := "call_" + strings.Repeat("x", 80)
	id40, id41, id64 := strings.Repeat("a", 40), strings.Repeat("b", 41), "fc_"+strings.Repeat("c", 61)
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
		{name: "40 bytes to chat unchanged", id: id40, to: Chat, want: id40},
		{name: "41 bytes to chat", id: id41, to: Chat},
		{name: "41 bytes to responses unchanged", id: id41, to: Responses, want: id41},
		{name: "64 bytes to responses unchanged", id: id64, to: Responses, want: id64},
		{name: "64 bytes to chat", id: id64, to: Chat},
		{name: "long id with dots to chat", id: "call.a/" + strings.Repeat("z", 40), to: Chat},
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
			limit := map[API]int{Chat: 40, Responses: 64, Messages: 64}[tt.to]
			if !anthropicID.MatchString(got) || len(got) > limit || got != mapID(tt.id, tt.to) {
				t.Fatalf("mapID(%q) = %q: not a stable safe id of at most %d bytes", tt.id, got, limit)
			}
			cut := min(len(tt.id), limit-9)
			if !strings.HasPrefix(got, strings.Map(func(r rune) rune {
				if r < 128 && safeByte(byte(r)) {
					return r
				}
				return '_'
			}, tt.id[:cut])+"_"+sha8(tt.id)) || len(got) != cut+9 {
				t.Fatalf("mapID(%q) = %q: want the first %d bytes, '_' and 8 hex digits of its SHA-256", tt.id, got, cut)
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
		{name: "65 bytes hashed", in: long, want: strings.Repeat("n", 55) + "_" + sha8(long)},
		{name: "namespace flattened", in: flatName("mcp", "read"), want: "mcp__read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := toolName(tt.in, Chat); got != tt.want || len(got) > 64 {
				t.Fatalf("toolName(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	if h := hashed("abc", hashedCut); h != "abc_ba7816bf" {
		t.Fatalf("hashed(abc) = %q, want the SHA-256 prefix ba7816bf", h)
	}
}

// sha8 is the first 8 lowercase hex digits of the SHA-256 of s.
func sha8(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:4])
}
