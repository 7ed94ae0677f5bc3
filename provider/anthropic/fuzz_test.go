package anthropic_test

import (
	"testing"

	"github.com/loopctl/loopctl-go/provider/internal/providertest"
)

// FuzzResponseBody serves arbitrary bytes as a 200 response: Complete must
// not panic, and a failure must never be a StatusError or Permanent (a body
// that cannot be understood is transient).
func FuzzResponseBody(f *testing.F) {
	providertest.FuzzResponseBody(f, harness,
		`{"content":[]}`, `{"content":null}`, `{"content":[{}]}`,
		`{"content":[{"type":"text","text":"hi"},{"type":"tool_use","id":"t","name":"f","input":{"a":[1]}}]}`,
		`{"content":[{"type":"tool_use","input":"x"}],"usage":{"input_tokens":-1}}`,
		`{"content":"nope","usage":"x"}`,
	)
}
