package gateway

import (
	"bytes"
	"encoding/json"
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
	api       string // the api label: chat, responses, messages, embeddings
	proto     string // the upstream wire it needs: APIOpenAI or APIAnthropic
	path      string // appended to the upstream's base URL
	anthropic bool   // errors in Anthropic's shape
	// classify tells an event of a stream: held back, content, the end
	// marker, or an error event. nil: the wire does not stream.
	classify func(ev []byte) (evInfo, error)
	pinned   bool // previous_response_id pinning (Responses)
	// translated: a client wire a request may reach an entry on another
	// wire through (chat, responses, messages), as xl.
	translated bool
	xl         xlate.API
	verdict    bool // false: the routed model only, no failover, no verdict (count_tokens)
	idx        int  // its index in wires (an upstream's URL for it: upstream.urls)
}

var (
	wireChat        = &wire{api: "chat", proto: APIOpenAI, path: "/chat/completions", classify: classifyChat, verdict: true, idx: 0, translated: true, xl: xlate.Chat}
	wireResponses   = &wire{api: "responses", proto: APIOpenAI, path: "/responses", classify: classifyResponses, pinned: true, verdict: true, idx: 1, translated: true, xl: xlate.Responses}
	wireEmbeddings  = &wire{api: "embeddings", proto: APIOpenAI, path: "/embeddings", verdict: true, idx: 2}
	wireMessages    = &wire{api: "messages", proto: APIAnthropic, path: "/v1/messages", anthropic: true, classify: classifyMessages, verdict: true, idx: 3, translated: true, xl: xlate.Messages}
	wireCountTokens = &wire{api: "messages", proto: APIAnthropic, path: "/v1/messages/count_tokens", anthropic: true, idx: 4}
)

// allWires are every wire, by idx.
var allWires = [...]*wire{wireChat, wireResponses, wireEmbeddings, wireMessages, wireCountTokens}

// servedOn names the client path a model on upstream wire proto is served on.
func servedOn(proto string) string {
	if proto == APIAnthropic {
		return "POST /v1/messages"
	}
	return "POST /v1/chat/completions, /v1/responses and /v1/embeddings"
}

// evInfo is what classify found in one event.
type evInfo struct {
	kind    kind
	errType string // kindError: the error's type or code (overloaded_error, ...)
	id      string // Responses: the response id response.created carries
}

// classifyChat classifies a chat.completion.chunk event.
func classifyChat(ev []byte) (evInfo, error) {
	k, err := classify(ev)
	if k == kindError {
		var e struct {
			Error struct {
				Type string `json:"type"`
				Code any    `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal(data(ev), &e)
		return evInfo{kind: k, errType: e.Error.Type}, err
	}
	return evInfo{kind: k}, err
}

// after classifies an event of a committed stream; for chat completions it
// decodes only the events that may end the stream.
func (w *wire) after(ev []byte) (evInfo, error) {
	if w == wireChat {
		d := data(ev)
		if len(d) == 0 || (d[0] == '{' && string(d) != "[DONE]" && !hasError(d)) {
			return evInfo{kind: kindContent}, nil
		}
	}
	return w.classify(ev)
}

// sseEvent returns an event's name (its event: line) and data; the name is
// the data's "type" when there is no event: line.
func sseEvent(ev []byte) (name string, d []byte, err error) {
	d = data(ev)
	for rest := ev; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if n, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte("event:")); ok {
			name = string(bytes.TrimSpace(n))
			break
		}
	}
	if d != nil && !jsonValid(d) {
		return name, d, errMalformedEvent
	}
	if name == "" && d != nil {
		var t struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(d, &t)
		name = t.Type
	}
	return name, d, nil
}

// classifyMessages classifies an Anthropic Messages event: everything before
// the first content_block_delta is held back (message_start,
// content_block_start, ping); message_stop ends the stream.
func classifyMessages(ev []byte) (evInfo, error) {
	name, d, err := sseEvent(ev)
	if err != nil {
		return evInfo{}, err
	}
	switch name {
	case "", "message_start", "content_block_start", "ping":
		return evInfo{kind: kindEmpty}, nil
	case "message_stop":
		return evInfo{kind: kindDone}, nil
	case "error":
		var e struct {
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		_ = json.Unmarshal(d, &e)
		return evInfo{kind: kindError, errType: e.Error.Type}, nil
	}
	return evInfo{kind: kindContent}, nil
}

// classifyResponses classifies a Responses API event: everything before the
// first *.delta is held back; response.completed (or response.incomplete)
// ends the stream; error and response.failed are error events.
func classifyResponses(ev []byte) (evInfo, error) {
	name, d, err := sseEvent(ev)
	if err != nil {
		return evInfo{}, err
	}
	switch name {
	case "", "response.created", "response.in_progress", "response.queued",
		"response.output_item.added", "response.content_part.added":
		info := evInfo{kind: kindEmpty}
		if name == "response.created" {
			var c struct {
				Response struct {
					ID string `json:"id"`
				} `json:"response"`
			}
			_ = json.Unmarshal(d, &c)
			info.id = c.Response.ID
		}
		return info, nil
	case "response.completed", "response.incomplete":
		return evInfo{kind: kindDone}, nil
	case "error", "response.failed":
		var e struct {
			Code     string `json:"code"`
			Response struct {
				Error struct {
					Code string `json:"code"`
				} `json:"error"`
			} `json:"response"`
		}
		_ = json.Unmarshal(d, &e)
		if e.Code == "" {
			e.Code = e.Response.Error.Code
		}
		return evInfo{kind: kindError, errType: e.Code}, nil
	}
	return evInfo{kind: kindContent}, nil
}

// brokenEvent returns the events that end a stream broken after its first
// content: chat completions data: {"error": ...} (no [DONE]); Messages an
// error event of type api_error; Responses an error event with code
// stream_interrupted, then response.failed. after is true when the
// upstream's own error event typ was already forwarded.
func (w *wire) brokenEvent(msg, respID string, forwarded bool) []byte {
	switch {
	case w.anthropic:
		if forwarded {
			return nil
		}
		b, _ := json.Marshal(anthropicError(http.StatusInternalServerError, msg))
		return sse("error", b)
	case w == wireResponses:
		var out []byte
		if !forwarded {
			b, _ := json.Marshal(map[string]any{"type": "error", "code": "stream_interrupted", "message": msg, "param": nil})
			out = sse("error", b)
		}
		b, _ := json.Marshal(map[string]any{"type": "response.failed", "response": map[string]any{
			"id": respID, "object": "response", "status": "failed", "output": []any{},
			"error": map[string]any{"code": "stream_interrupted", "message": msg},
		}})
		return append(out, sse("response.failed", b)...)
	}
	if forwarded {
		return nil
	}
	b, _ := json.Marshal(struct {
		Error apiError `json:"error"`
	}{apiError{Message: msg, Type: "upstream_error", Code: "stream_interrupted"}})
	return sse("", b)
}

func sse(name string, d []byte) []byte {
	var b []byte
	if name != "" {
		b = append(append(append(b, "event: "...), name...), '\n')
	}
	return append(append(append(b, "data: "...), d...), "\n\n"...)
}

// anthropicTypes are Anthropic's error types by status.
var anthropicTypes = map[int]string{
	400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
	404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error",
}

type anError struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

func anthropicError(status int, msg string) anError {
	e := anError{Type: "error"}
	e.Error.Type = anthropicTypes[status]
	if e.Error.Type == "" {
		e.Error.Type = "api_error"
	}
	e.Error.Message = msg
	return e
}

// writeError writes e with status in the wire's shape (a nil wire: OpenAI's).
func (w *wire) writeError(rw http.ResponseWriter, status int, e apiError) {
	if w == nil || !w.anthropic {
		writeOpenAIError(rw, status, e)
		return
	}
	b, _ := json.Marshal(anthropicError(status, e.Message))
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
