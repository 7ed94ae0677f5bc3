package openai_test

import (
	"testing"

	"github.com/loopctl/loopctl-go/provider/internal/providertest"
)

// FuzzResponseBody serves arbitrary bytes as a 200 response: Complete must
// not panic, a failure must never be a StatusError or Permanent (a body
// that cannot be understood is transient), and every tool call returned
// must have an ID (harness.FillsToolCallIDs).
func FuzzResponseBody(f *testing.F) {
	providertest.FuzzResponseBody(f, harness,
		`{"choices":[]}`, `{"choices":null}`, `{"choices":[{}]}`,
		`{"choices":[{"message":{"content":"hi","tool_calls":[{"id":"a","function":{"name":"f","arguments":"{"}}]}}]}`,
		`{"choices":[{"message":{"tool_calls":[{"type":"custom","custom":{"name":"c","input":"x"}}]}}],"usage":{"prompt_tokens":-1}}`,
		`{"choices":"nope","usage":"x"}`,
	)
}
