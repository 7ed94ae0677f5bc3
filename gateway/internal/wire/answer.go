package wire

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// ErrMalformedAnswer is wrapped by the error Response returns for an
// upstream answer it cannot decode: the gateway treats it as a malformed
// upstream answer (a failure of that entry).
var ErrMalformedAnswer = errors.New("wire: malformed upstream answer")

// errUnknownClientWire is a Translation whose From is not a wire.
var errUnknownClientWire = errors.New("wire: unknown client wire")

// MintedResponsePrefix begins every Responses id minted by translation, so
// a later previous_response_id naming one is recognised without state and
// answered 400 (GATEWAY §8.3).
const MintedResponsePrefix = "resp_lx"

// Minted reports whether id is a Responses id minted by translation.
func Minted(id string) bool { return strings.HasPrefix(id, MintedResponsePrefix) }

// malformed wraps why an answer of wire api could not be decoded.
func malformed(api API, why error) error {
	return fmt.Errorf("%w: %s: %v", ErrMalformedAnswer, api, why)
}

// Response translates a whole 2xx JSON answer of the entry (on wire
// t.To.API) into the client's wire t.From (GATEWAY §8.4): model, ids,
// content, tool calls, stop reason and usage. An answer it cannot decode is
// an error wrapping ErrMalformedAnswer.
func (t *Translation) Response(body []byte) ([]byte, error) {
	resp, err := decodeAnswer(t.To.API, body)
	if err != nil {
		return nil, err
	}
	if resp.Model == "" {
		resp.Model = t.To.Model
	}
	t.cutStops(&resp)
	t.toClient(&resp)
	switch t.From {
	case Chat:
		return encodeChatAnswer(resp)
	case Responses:
		return encodeResponsesAnswer(resp)
	case Messages:
		return encodeMessagesAnswer(resp)
	}
	return nil, errUnknownClientWire
}

// decodeAnswer decodes a whole answer of wire api into the neutral form;
// an error wraps ErrMalformedAnswer.
func decodeAnswer(api API, body []byte) (Response, error) {
	var (
		resp Response
		err  error
	)
	switch api {
	case Chat:
		resp, err = decodeChatAnswer(body)
	case Responses:
		resp, err = decodeResponsesAnswer(body)
	case Messages:
		resp, err = decodeMessagesAnswer(body)
	default:
		err = fmt.Errorf("unknown wire %s", api)
	}
	if err != nil {
		return Response{}, malformed(api, err)
	}
	return resp, nil
}

// Refused reports whether body, a whole answer on wire api, is a refusal
// before any content (GATEWAY §8.7): its stop reason is a refusal
// (Messages refusal, chat content_filter, Responses incomplete for
// content_filter) and it carries no text and no tool call.
func Refused(api API, body []byte) bool {
	resp, err := decodeAnswer(api, body)
	if err != nil || resp.Stop != Refusal {
		return false
	}
	for _, p := range resp.Content {
		if p.Kind == ToolCall || p.Kind == Text && p.Text != "" {
			return false
		}
	}
	return true
}

// toClient maps the answer's tool calls back to the client's tools: a
// hashed or flattened name to the original (with its namespace on
// Responses), a custom tool's call (Responses, chat) to its raw input
// string, and call ids to ids the client's wire accepts.
func (t *Translation) toClient(resp *Response) {
	for i := range resp.Content {
		p := &resp.Content[i]
		if p.Kind != ToolCall {
			continue
		}
		tool := t.clientTool(p.Name)
		p.Name, p.Namespace, p.Custom = tool.Name, tool.Namespace, tool.Custom
		if p.Custom {
			p.Text = customInput(p.Input)
		}
		p.CallID = answerCallID(p.CallID, t.From)
	}
}

// settleStop makes a natural end agree with the tool calls the answer
// has: ToolUse without a call is EndTurn, EndTurn with calls is ToolUse.
func settleStop(stop Stop, calls int) Stop {
	switch {
	case stop == ToolUse && calls == 0:
		return EndTurn
	case stop == EndTurn && calls > 0:
		return ToolUse
	}
	return stop
}

// customInput is a custom tool call's raw input: the "input" field of the
// arguments object (its JSON text when it is not a string).
func customInput(args json.RawMessage) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(args, &fields) != nil {
		return ""
	}
	raw, ok := fields["input"]
	if !ok {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// cutStops cuts the answer's text at the first occurrence of any of the
// request's stop sequences when the entry could not apply them (a
// Responses target): everything after it is dropped and the stop reason is
// StopSequence. A sequence is looked for within each text part.
func (t *Translation) cutStops(resp *Response) {
	if len(t.stops) == 0 {
		return
	}
	for i, p := range resp.Content {
		if p.Kind != Text {
			continue
		}
		at, seq := -1, ""
		for _, s := range t.stops {
			if s == "" {
				continue
			}
			if j := strings.Index(p.Text, s); j >= 0 && (at < 0 || j < at) {
				at, seq = j, s
			}
		}
		if at < 0 {
			continue
		}
		resp.Content[i].Text = p.Text[:at]
		resp.Content = resp.Content[:i+1]
		if at == 0 {
			resp.Content = resp.Content[:i]
		}
		resp.Stop, resp.StopSequence = StopSequence, seq
		return
	}
}

// toolInput returns a tool call's arguments as a JSON object: an empty or
// unparsable arguments string, or one that is not an object, is {}.
func toolInput(args []byte) json.RawMessage {
	var obj map[string]json.RawMessage
	if len(args) == 0 || json.Unmarshal(args, &obj) != nil || obj == nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(compactJSON(args))
}

// compactJSON returns valid JSON without insignificant space.
func compactJSON(raw []byte) []byte {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return raw
	}
	return buf.Bytes()
}

// mintID returns an id in the client's wire's form: prefix and the
// upstream's id with each byte outside [A-Za-z0-9_-] replaced by '_' (cut
// to 64 bytes), or random hex when the upstream gave none.
func mintID(prefix, upstream string) string {
	if upstream == "" {
		return prefix + randomHex()
	}
	if len(upstream) > 64 {
		upstream = upstream[:64]
	}
	b := []byte(upstream)
	for i, c := range b {
		if !safeByte(c) {
			b[i] = '_'
		}
	}
	return prefix + string(b)
}

// randomHex is 24 random hex digits.
func randomHex() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24)
	return hex.EncodeToString(b[:])
}

// answerCallID returns the tool call id the client's wire gets: the
// upstream's id when that wire accepts it, otherwise mapped by the request
// rule (mapID, GATEWAY §8.2), or a minted id when the upstream gave none.
func answerCallID(id string, to API) string {
	if id != "" {
		return mapID(id, to)
	}
	if to == Messages {
		return "toolu_" + randomHex()
	}
	return "call_" + randomHex()
}
