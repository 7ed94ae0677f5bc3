package gateway

import (
	"net/http"
	"strconv"

	xlate "github.com/loopctl/loopctl-go/gateway/internal/wire"
)

// The upstream wires (Upstream.API).
const (
	APIOpenAI    = "openai"    // chat completions, responses, embeddings
	APIAnthropic = "anthropic" // messages
)

// wire is one API the gateway serves (docs/GATEWAY.md §6): where its
// requests go upstream, how its streams commit and end, and the shape of
// its errors. The attempt loop (exchange.run) is the same for every wire.
type wire struct {
	api   string // the api label: chat, responses, messages, embeddings
	proto string // the upstream wire it needs: APIOpenAI or APIAnthropic
	path  string // appended to the upstream's base URL
	// xl is the wire's API in package gateway/internal/wire: how its stream
	// events are classified, the events that end its broken streams, the
	// shape of its errors (embeddings: chat's; count_tokens: messages').
	xl xlate.API
	// streams: the wire streams (its events classified by xlate.Classify).
	streams bool
	pinned  bool // previous_response_id pinning (Responses)
	// translated: a client wire a request may reach an entry on another
	// wire through (chat, responses, messages), as xl.
	translated bool
	verdict    bool // false: the routed model only, no failover, no verdict (count_tokens)
	idx        int  // its index in wires (an upstream's URL for it: upstream.urls)
}

var (
	wireChat        = &wire{api: "chat", proto: APIOpenAI, path: "/chat/completions", xl: xlate.Chat, streams: true, verdict: true, idx: 0, translated: true}
	wireResponses   = &wire{api: "responses", proto: APIOpenAI, path: "/responses", xl: xlate.Responses, streams: true, pinned: true, verdict: true, idx: 1, translated: true}
	wireEmbeddings  = &wire{api: "embeddings", proto: APIOpenAI, path: "/embeddings", xl: xlate.Chat, verdict: true, idx: 2}
	wireMessages    = &wire{api: "messages", proto: APIAnthropic, path: "/v1/messages", xl: xlate.Messages, streams: true, verdict: true, idx: 3, translated: true}
	wireCountTokens = &wire{api: "messages", proto: APIAnthropic, path: "/v1/messages/count_tokens", xl: xlate.Messages, idx: 4}
)

// allWires are every wire, by idx.
var allWires = [...]*wire{wireChat, wireResponses, wireEmbeddings, wireMessages, wireCountTokens}

// writeError writes e with status in the wire's shape (a nil wire: OpenAI's).
func (w *wire) writeError(rw http.ResponseWriter, status int, e apiError) {
	if w == nil || w.xl != xlate.Messages {
		writeOpenAIError(rw, status, e)
		return
	}
	b := xlate.ErrorBody(xlate.Messages, status, "", "", e.Message)
	rw.Header().Set("Content-Type", "application/json")
	rw.Header().Del("Content-Length")
	rw.WriteHeader(status)
	_, _ = rw.Write(b)
}

// retryHeaders sets Retry-After (whole seconds, rounded up) and
// retry-after-ms for a wait of ns nanoseconds.
func retryHeaders(h http.Header, ns int64) {
	h.Set("Retry-After", ceilSeconds(ns))
	h.Set("Retry-After-Ms", strconv.FormatInt(max((ns+999_999)/1_000_000, 1), 10))
}
