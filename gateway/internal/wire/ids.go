package wire

import (
	"crypto/sha256"
	"encoding/hex"
)

// Tool call ids and tool names across wires (GATEWAY §8.2, ids and tools).
//
// An id or name the target accepts is sent unchanged. Otherwise each byte
// outside [A-Za-z0-9_-] becomes '_', the result is cut to the target's
// limit less 9 bytes (55 for 64), and '_' and the first 8 lowercase hex
// digits of the SHA-256 of the original are appended. The mapping is a
// pure function of the original and the target, so a call and its result
// map to the same id on every request with no state kept; a mapped id is
// one every wire accepts, so the client sends it back unchanged.

// maxOpenAIID is the longest Responses call_id and tool name an OpenAI
// wire accepts.
const maxOpenAIID = 64

// maxChatID is the longest tool call id chat completions accepts
// (tool_calls[].id, tool_call_id: "string too long. Expected a string
// with maximum length 40").
const maxChatID = 40

// hashedCut is how many bytes of the original a hashed id or name of at
// most 64 bytes keeps.
const hashedCut = maxOpenAIID - 9

// mapID returns the call id to send on wire to: Messages needs
// ^[a-zA-Z0-9_-]+$; Responses a non-empty id of at most 64 bytes, chat
// one of at most 40.
func mapID(id string, to API) string {
	switch {
	case id == "":
		return hashed(id, hashedCut)
	case to == Messages:
		if !safeBytes(id) {
			return hashed(id, hashedCut)
		}
	case to == Chat:
		if len(id) > maxChatID {
			return hashed(id, maxChatID-9)
		}
	case len(id) > maxOpenAIID:
		return hashed(id, hashedCut)
	}
	return id
}

// toolName returns the tool name to send on wire to: every wire accepts
// ^[a-zA-Z0-9_-]{1,64}$ (a longer name is hashed, as OpenAI requires).
func toolName(name string, to API) string {
	if name == "" || len(name) > maxOpenAIID || !safeBytes(name) {
		return hashed(name, hashedCut)
	}
	return name
}

// flatName is the name a Responses namespace tool is sent under:
// <namespace>__<name>.
func flatName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "__" + name
}

// safeBytes reports whether s holds only [A-Za-z0-9_-].
func safeBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if !safeByte(s[i]) {
			return false
		}
	}
	return true
}

func safeByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// hashed is s with unsafe bytes replaced by '_', cut to cut bytes, then
// '_' and 8 hex digits of the SHA-256 of s: at most cut+9 bytes.
func hashed(s string, cut int) string {
	n := min(len(s), cut)
	out := make([]byte, 0, n+9)
	for i := 0; i < n; i++ {
		c := s[i]
		if !safeByte(c) {
			c = '_'
		}
		out = append(out, c)
	}
	sum := sha256.Sum256([]byte(s))
	out = append(out, '_')
	return string(hex.AppendEncode(out, sum[:4]))
}
