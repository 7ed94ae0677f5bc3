package gateway

import (
	"net/http"
	"strconv"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
)

// The upstream wires (Upstream.API).
const (
	APIOpenAI    = "openai"    // chat completions, responses, embeddings
	APIAnthropic = "anthropic" // messages
)

// endpoint is one API the gateway serves (docs/GATEWAY.md §6): where its
// requests go upstream, how its streams commit and end, and the shape of
// its errors. The attempt loop (exchange.run) is the same for every endpoint.
type endpoint struct {
	label string // the api label: chat, responses, messages, count_tokens, embeddings
	api   string // the upstream wire it needs: APIOpenAI or APIAnthropic
	path  string // appended to the upstream's base URL
	// wire is the wire's API in package gateway/internal/wire: how its stream
	// events are classified, the events that end its broken streams, the
	// shape of its errors (embeddings: chat's; count_tokens: messages').
	wire wire.API
	// streams: the wire streams (its events classified by wire.Classify).
	streams bool
	pinned  bool // previous_response_id pinning (Responses)
	// translated: a client wire a request may reach an entry on another
	// wire through (chat, responses, messages), by its wire.
	translated bool
	settles    bool // false: the routed model only, no failover, no verdict (count_tokens)
	idx        int  // its index in wires (an upstream's URL for it: upstream.urls)
}

var (
	chatEndpoint        = &endpoint{label: "chat", api: APIOpenAI, path: "/chat/completions", wire: wire.Chat, streams: true, settles: true, idx: 0, translated: true}
	responsesEndpoint   = &endpoint{label: "responses", api: APIOpenAI, path: "/responses", wire: wire.Responses, streams: true, pinned: true, settles: true, idx: 1, translated: true}
	embeddingsEndpoint  = &endpoint{label: "embeddings", api: APIOpenAI, path: "/embeddings", wire: wire.Chat, settles: true, idx: 2}
	messagesEndpoint    = &endpoint{label: "messages", api: APIAnthropic, path: "/v1/messages", wire: wire.Messages, streams: true, settles: true, idx: 3, translated: true}
	countTokensEndpoint = &endpoint{label: "count_tokens", api: APIAnthropic, path: "/v1/messages/count_tokens", wire: wire.Messages, idx: 4}
)

// endpoints are every wire, by idx.
var endpoints = [...]*endpoint{chatEndpoint, responsesEndpoint, embeddingsEndpoint, messagesEndpoint, countTokensEndpoint}

// writeError writes e with status in the wire's shape (a nil wire: OpenAI's).
func (w *endpoint) writeError(rw http.ResponseWriter, status int, e apiError) {
	if w == nil || w.wire != wire.Messages {
		writeOpenAIError(rw, status, e)
		return
	}
	b := wire.ErrorBody(wire.Messages, status, "", "", e.Message)
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
