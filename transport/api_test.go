package transport_test

import (
	"net/http"

	"github.com/loopctl/loopctl-go/transport"
)

// The exported API as docs/API.md states it: this file stops compiling if a
// signature drifts.
var (
	_ func(transport.Settings) (*transport.RoundTripper, error) = transport.New
	_ http.RoundTripper                                         = (*transport.RoundTripper)(nil)

	// Revision 4: the retry budget per key (SEMANTICS §8.3).
	_ = transport.Settings{RetryBudget: 0.2, RetryBudgetBurst: 10}
)
