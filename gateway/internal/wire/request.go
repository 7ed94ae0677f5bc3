package wire

// # Request mapping
//
// Translate decodes a client request into [Request] with the decoder of
// its wire (request_chat.go, request_responses.go, request_messages.go)
// and encodes it with the encoder of the target's wire (GATEWAY §8.2):
//
//   - system: Messages system ↔ chat's leading system/developer messages ↔
//     Responses instructions (and leading system/developer items). A later
//     system/developer turn is sent as a user turn, after the tool results
//     that follow it.
//   - content: text, images (base64 ↔ data: URL, URLs as they are), PDF
//     documents ↔ chat file / Responses input_file. Blank text never
//     reaches Messages.
//   - tools: function tools on every wire, each with an object schema
//     (request_schema.go); a custom (freeform) tool is a function with one
//     string field "input"; a namespace tool's function tools are named
//     <namespace>__<name>; names and call ids a target refuses are hashed
//     (ids.go). Translation.tools maps every name sent upstream back to
//     the client's tool.
//   - tool results follow the turn that called them: one role:tool message
//     (chat) or function_call_output (Responses) each; one user turn of
//     tool_result blocks (Messages). is_error ↔ "Error: " prefix.
//   - limits: max_tokens ↔ max_tokens / max_completion_tokens ↔
//     max_output_tokens; Messages gets Target.DefaultMaxTokens (4096) when
//     none is set, temperature at most 1, and no top_p beside temperature.
//     A Responses target has no stop parameter: Translation.stops keeps the
//     stop sequences to cut the answer locally.
//   - reasoning: thinking blocks go to Anthropic-family targets only,
//     Responses reasoning items to Responses only; budget ↔ effort
//     (≤ 2048 low, ≤ 8192 medium, else high; low 1024, medium 4096, high
//     16384, below max_tokens).
//   - skips (GATEWAY §8.3) become *UnsupportedError; parameters that change
//     nothing the client reads, unknown top-level fields and built-in tools
//     merely offered are named in Translation.Dropped. Responses include
//     and truncation are dropped silently (they change nothing a
//     translated answer carries).
//   - estimate: the input tokens of the request, estimated as the bytes of
//     its text (system, messages, tool inputs and results, tool
//     definitions) / 4, plus 1,000 per image or document.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// ErrSameWire is returned by [Translate] for a request whose client wire
// is the target's: same-wire traffic is forwarded, never translated.
var ErrSameWire = errors.New("wire: a request is never translated to its own wire")

// Translate decodes body, a client request on wire from, and encodes it
// for the chain entry to. A body that does not decode is a *RequestError;
// a request the target's wire cannot express is an *UnsupportedError.
func Translate(from API, body []byte, to Target) (*Translation, error) {
	if from == to.API {
		return nil, ErrSameWire
	}
	req, err := decodeRequest(from, body)
	if err != nil {
		return nil, err
	}
	return translate(from, req, len(body), to)
}

// translate encodes req, decoded from a body of size bytes on wire from,
// for the chain entry to.
func translate(from API, req *Request, size int, to Target) (*Translation, error) {
	if len(req.Skip) > 0 {
		return nil, &UnsupportedError{From: from, To: to.API, Field: req.Skip[0]}
	}
	req.Messages = lateSystemToUser(req.Messages)
	enc := &encoding{req: req, to: to, tools: make(map[string]Tool, len(req.Tools)), size: size + size/8}
	for _, name := range req.Dropped {
		enc.drop(name)
	}
	out, err := enc.encode()
	if err != nil {
		return nil, &RequestError{Message: "wire: cannot encode the request: " + err.Error()}
	}
	t := &Translation{From: from, To: to, Body: out, Dropped: enc.dropped, tools: enc.tools,
		streamUsage: req.StreamUsage, estimate: estimateTokens(req)}
	if to.API == Responses {
		t.stops = req.Stop
	}
	return t, nil
}

// decodeRequest decodes a request on wire from into the neutral form.
func decodeRequest(from API, body []byte) (*Request, error) {
	switch from {
	case Chat:
		return decodeChat(body)
	case Responses:
		return decodeResponses(body)
	case Messages:
		return decodeMessages(body)
	}
	return nil, &RequestError{Message: "wire: unknown wire " + from.String()}
}

// encoding is one request being encoded for one target: the names sent
// upstream for the client's tools and what was left out.
type encoding struct {
	req     *Request
	to      Target
	tools   map[string]Tool
	dropped []string
	size    int // the capacity the body is written in
}

func (e *encoding) encode() ([]byte, error) {
	switch e.to.API {
	case Chat:
		return e.encodeChat()
	case Responses:
		return e.encodeResponses()
	}
	return e.encodeMessages()
}

// drop names a parameter left out, once.
func (e *encoding) drop(name string) {
	for _, d := range e.dropped {
		if d == name {
			return
		}
	}
	e.dropped = append(e.dropped, name)
}

// toolName returns the name a client tool (or a call of it) is sent under
// and records it so the answer maps it back.
func (e *encoding) toolName(name, namespace string, custom bool) string {
	up := toolName(flatName(namespace, name), e.to.API)
	if _, ok := e.tools[up]; !ok {
		e.tools[up] = Tool{Name: name, Namespace: namespace, Custom: custom}
	}
	return up
}

// toolSchema is the JSON schema a tool is sent with: a custom tool's one
// string field "input", else the client's schema as an object schema
// (objectSchema).
func toolSchema(t Tool) json.RawMessage {
	if t.Custom {
		return customSchema
	}
	return objectSchema(t.Schema)
}

var (
	customSchema = json.RawMessage(`{"type":"object","properties":{"input":{"type":"string"}},"required":["input"]}`)
	emptySchema  = json.RawMessage(`{"type":"object","properties":{}}`)
	emptyObject  = json.RawMessage(`{}`)
)

// callInput is a tool call's arguments as sent to a wire taking an object:
// a custom call's raw input in field "input"; empty or invalid → {}.
func callInput(p Part) json.RawMessage {
	if p.Custom {
		b, _ := json.Marshal(struct {
			Input string `json:"input"`
		}{p.Text})
		return b
	}
	return argumentsObject(p.Input)
}

// argumentsObject returns raw when it is a JSON object, else {}.
func argumentsObject(raw []byte) json.RawMessage {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 || s[0] != '{' || !validJSON(s) {
		return emptyObject
	}
	return json.RawMessage(s)
}

// requestError turns a JSON decoding error into a *RequestError naming the
// field when the decoder knows it.
func requestError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return &RequestError{Param: typeErr.Field, Message: "invalid request: " + typeErr.Error()}
	}
	return &RequestError{Message: "invalid request body: " + err.Error()}
}

// skipFor and dropFor note a request parameter another wire cannot express
// (Skip) or that changes nothing the client reads (Dropped), once.
func skipFor(req *Request, field string) {
	for _, s := range req.Skip {
		if s == field {
			return
		}
	}
	req.Skip = append(req.Skip, field)
}

func dropFor(req *Request, field string) {
	for _, s := range req.Dropped {
		if s == field {
			return
		}
	}
	req.Dropped = append(req.Dropped, field)
}

// noteTopLevel names every top-level field of body that is neither known
// (mapped or checked by the decoder) nor absent in Dropped.
func noteTopLevel(req *Request, body []byte, known map[string]bool) {
	noteKeys(req, topLevelKeys(body), known)
}

// noteKeys names in Dropped every key that is not known.
func noteKeys(req *Request, keys []string, known map[string]bool) {
	for _, key := range keys {
		if !known[key] {
			dropFor(req, key)
		}
	}
}

// lateSystemToUser turns each system turn after the first into a user
// turn, moved past the tool results that follow it (GATEWAY §8.2).
func lateSystemToUser(msgs []Message) []Message {
	out := make([]Message, 0, len(msgs))
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role != "system" {
			out = append(out, m)
			continue
		}
		m.Role = "user"
		if i+1 < len(msgs) && msgs[i+1].Role == "user" && leadingResults(msgs[i+1].Parts) > 0 {
			next := msgs[i+1].Parts
			n := leadingResults(next)
			parts := make([]Part, 0, len(next)+len(m.Parts))
			parts = append(append(append(parts, next[:n]...), m.Parts...), next[n:]...)
			m.Parts = parts
			i++
		}
		out = append(out, m)
	}
	return out
}

// leadingResults counts the tool results at the start of parts.
func leadingResults(parts []Part) int {
	n := 0
	for n < len(parts) && parts[n].Kind == ToolResult {
		n++
	}
	return n
}

// Thinking budget ↔ effort (GATEWAY §8.2).

// effortOf returns a thinking setting's OpenAI effort.
func effortOf(t *Thinking) string {
	if t.Effort != "" {
		return t.Effort
	}
	switch {
	case t.Budget <= 2048:
		return "low"
	case t.Budget <= 8192:
		return "medium"
	}
	return "high"
}

// budgetOf returns a thinking setting's Messages budget.
func budgetOf(t *Thinking) int {
	if t.Budget > 0 {
		return t.Budget
	}
	switch t.Effort {
	case "low":
		return 1024
	case "high":
		return 16384
	}
	return 4096
}

// normalEffort maps an OpenAI effort to low, medium or high; "" for none.
func normalEffort(effort string) string {
	switch effort {
	case "", "none":
		return ""
	case "minimal", "low":
		return "low"
	case "high", "xhigh", "max":
		return "high"
	}
	return "medium"
}

// parseDataURL splits data:<media type>;base64,<data>; ok is false for any
// other URL.
func parseDataURL(url string) (mediaType, data string, ok bool) {
	rest, found := strings.CutPrefix(url, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mediaType, isBase64 := strings.CutSuffix(meta, ";base64")
	if !isBase64 {
		data = base64.StdEncoding.EncodeToString([]byte(data))
	}
	return mediaType, data, true
}

// dataURL is a part's media as a URL: its URL, or a data: URL.
func dataURL(p Part) string {
	if p.URL != "" {
		return p.URL
	}
	return "data:" + p.MediaType + ";base64," + p.Data
}

// joinText joins the text of parts with "\n\n".
func joinText(parts []Part) string {
	if len(parts) == 1 {
		return parts[0].Text
	}
	n := 0
	for i, p := range parts {
		n += len(p.Text)
		if i > 0 {
			n += 2
		}
	}
	var b strings.Builder
	b.Grow(n)
	for i, p := range parts {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(p.Text)
	}
	return b.String()
}

// blank reports whether s is empty or whitespace only.
func blank(s string) bool { return strings.TrimSpace(s) == "" }
