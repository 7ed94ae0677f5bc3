package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Stream events as the gateway relays them, translated or not (GATEWAY §6):
// before the first content it may hold events back and still fail over;
// the wire's end marker makes the stream a success; an error event, or a
// stream that stops before its end marker, a failure.

// EventKind is what one stream event is to the gateway's hold-back rule.
type EventKind int

// The kinds of stream events.
const (
	// EventHold may be held back before the first content: a comment, a
	// role-only chunk, message_start, content_block_start, ping,
	// response.created...
	EventHold EventKind = iota
	// EventContent carries content: text, a tool call, a finish reason,
	// usage, a content_block_delta, a response.output_text.delta...
	EventContent
	// EventEnd is the wire's end marker: data: [DONE], message_stop,
	// response.completed or response.incomplete.
	EventEnd
	// EventError is an error event: data: {"error": ...}, event: error,
	// response.failed.
	EventError
)

// String returns the kind's name: hold, content, end or error.
func (k EventKind) String() string {
	switch k {
	case EventHold:
		return "hold"
	case EventContent:
		return "content"
	case EventEnd:
		return "end"
	case EventError:
		return "error"
	}
	return fmt.Sprintf("wire.EventKind(%d)", int(k))
}

// EventInfo is what [Classify] found in one event.
type EventInfo struct {
	Kind EventKind
	// ErrType is an error event's type or code (overloaded_error,
	// rate_limit_exceeded, ...); "" when it has none or the event is not
	// an error.
	ErrType string
	// ID is the response id response.created carries (Responses); "" in
	// every other event.
	ID string
}

// ErrMalformedStreamEvent is [Classify]'s error for an event whose data is
// not JSON (chat: not a chunk). The [Transcoder]'s is [ErrMalformedEvent].
var ErrMalformedStreamEvent = errors.New("upstream sent a malformed stream event")

// errUnknownStreamWire is [Classify]'s error for an api that is not a wire.
var errUnknownStreamWire = errors.New("wire: events of an unknown wire")

// Classify tells what one event of a stream on wire api is: held back,
// content, the end marker or an error event (with its type). ev is the
// event's lines, up to and including the blank line that ends it.
//
// Chat: a chunk may be held back when each choice's delta has nothing but
// a role and empty or null content, and no finish reason. Messages:
// everything before the first content_block_delta is held back. Responses:
// everything before the first *.delta is held back.
func Classify(api API, ev []byte) (EventInfo, error) {
	switch api {
	case Chat:
		return classifyChatEvent(ev)
	case Messages:
		return classifyMessagesEvent(ev)
	case Responses:
		return classifyResponsesEvent(ev)
	}
	return EventInfo{}, errUnknownStreamWire
}

// After is [Classify] for an event of a committed stream, where only the
// end marker and error events matter: on chat it decodes only the events
// that may end the stream (a JSON chunk that is not an error object is
// content, undecoded).
func After(api API, ev []byte) (EventInfo, error) {
	if api == Chat {
		d := Data(ev)
		if len(d) == 0 || (d[0] == '{' && string(d) != "[DONE]" && !chatErrorData(d)) {
			return EventInfo{Kind: EventContent}, nil
		}
	}
	return Classify(api, ev)
}

// chatErrorData reports whether a chat data payload is an error object (or
// not JSON), cheaply: the chunks of a healthy stream start with {"id" or
// {"choices".
func chatErrorData(d []byte) bool {
	return len(d) > 9 && string(d[:9]) == `{"error":` || !json.Valid(d)
}

// Data returns the payload of an event's first data line, trimmed (OpenAI
// sends one data line per event); nil when it has none.
func Data(ev []byte) []byte {
	return firstLineValue(ev, "data:")
}

// firstLineValue is the rest of ev's first line that starts with prefix,
// trimmed; nil when no line does.
func firstLineValue(ev []byte, prefix string) []byte {
	for len(ev) > 0 {
		var line []byte
		line, ev = cutLine(ev)
		if p, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r"), []byte(prefix)); ok {
			return bytes.TrimSpace(p)
		}
	}
	return nil
}

// classifiedChunk is what classifyChatEvent decodes of a
// chat.completion.chunk.
type classifiedChunk struct {
	Choices []struct {
		Delta        map[string]json.RawMessage `json:"delta"`
		FinishReason json.RawMessage            `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// classifyChatEvent classifies a chat.completion.chunk event.
func classifyChatEvent(ev []byte) (EventInfo, error) {
	d := Data(ev)
	switch {
	case d == nil:
		return EventInfo{Kind: EventHold}, nil
	case string(d) == "[DONE]":
		return EventInfo{Kind: EventEnd}, nil
	}
	var c classifiedChunk
	if err := json.Unmarshal(d, &c); err != nil {
		return EventInfo{}, ErrMalformedStreamEvent
	}
	if isSetJSON(c.Error) {
		return errorTypeEvent(d), nil
	}
	if isSetJSON(c.Usage) {
		return EventInfo{Kind: EventContent}, nil
	}
	for _, ch := range c.Choices {
		if isSetJSON(ch.FinishReason) {
			return EventInfo{Kind: EventContent}, nil
		}
		for k, v := range ch.Delta {
			switch {
			case k == "role":
			case k == "content" || k == "refusal" || k == "reasoning_content":
				if isSetJSON(v) && string(v) != `""` {
					return EventInfo{Kind: EventContent}, nil
				}
			case isSetJSON(v):
				return EventInfo{Kind: EventContent}, nil
			}
		}
	}
	return EventInfo{Kind: EventHold}, nil
}

// errorTypeEvent is the error event whose data d is {"error":{"type":...}}
// (chat and Messages).
func errorTypeEvent(d []byte) EventInfo {
	var e struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	_ = json.Unmarshal(d, &e)
	return EventInfo{Kind: EventError, ErrType: e.Error.Type}
}

// isSetJSON reports whether a JSON value is present and not null.
func isSetJSON(v json.RawMessage) bool { return len(v) > 0 && string(v) != "null" }

// eventNameAndData returns an event's name (its event: line) and data;
// the name is the data's "type" when there is no event: line.
func eventNameAndData(ev []byte) (name string, d []byte, err error) {
	d = Data(ev)
	name = string(firstLineValue(ev, "event:"))
	if d != nil && !json.Valid(d) {
		return name, d, ErrMalformedStreamEvent
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

// classifyMessagesEvent classifies an Anthropic Messages event: everything
// before the first content_block_delta is held back (message_start,
// content_block_start, ping); message_stop ends the stream.
func classifyMessagesEvent(ev []byte) (EventInfo, error) {
	name, d, err := eventNameAndData(ev)
	if err != nil {
		return EventInfo{}, err
	}
	switch name {
	case "", "message_start", "content_block_start", "ping":
		return EventInfo{Kind: EventHold}, nil
	case "message_stop":
		return EventInfo{Kind: EventEnd}, nil
	case "error":
		return errorTypeEvent(d), nil
	}
	return EventInfo{Kind: EventContent}, nil
}

// classifyResponsesEvent classifies a Responses API event: everything
// before the first *.delta is held back; response.completed (or
// response.incomplete) ends the stream; error and response.failed are
// error events, whose type is their code.
func classifyResponsesEvent(ev []byte) (EventInfo, error) {
	name, d, err := eventNameAndData(ev)
	if err != nil {
		return EventInfo{}, err
	}
	switch name {
	case "", "response.in_progress", "response.queued",
		"response.output_item.added", "response.content_part.added":
		return EventInfo{Kind: EventHold}, nil
	case "response.created":
		var c struct {
			Response struct {
				ID string `json:"id"`
			} `json:"response"`
		}
		_ = json.Unmarshal(d, &c)
		return EventInfo{Kind: EventHold, ID: c.Response.ID}, nil
	case "response.completed", "response.incomplete":
		return EventInfo{Kind: EventEnd}, nil
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
		return EventInfo{Kind: EventError, ErrType: e.Code}, nil
	}
	return EventInfo{Kind: EventContent}, nil
}
