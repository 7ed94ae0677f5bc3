package wire

import (
	"encoding/json"
	"strconv"
)

// The Responses client encoder: response.created and .in_progress, one
// output item per text run or tool call (each finished before the next is
// added), response.completed or .incomplete with the whole output and the
// usage; sequence_number counts every event from 0.

// responsesStreamEncoder writes a Responses stream. It keeps the output's text
// and arguments: the closing event repeats them.
type responsesStreamEncoder struct {
	s       *Transcoder
	seq     int
	started bool
	items   []*streamItem
	open    int // the open item's output index, -1 when none
	tools   map[int]int
	stop    Stop
	stopped bool
	usage   Usage
}

// The kinds of output item.
const (
	streamItemMessage byte = iota
	streamItemFunctionCall
	streamItemCustomToolCall
)

// streamItem is one output item of the client's stream.
type streamItem struct {
	kind      byte
	id        string
	callID    string
	name      string
	namespace string
	buf       []byte // the text, or the call's arguments
	done      bool
}

// newResponsesStreamEncoder starts with no item open.
func newResponsesStreamEncoder(s *Transcoder) *responsesStreamEncoder {
	return &responsesStreamEncoder{s: s, open: -1}
}

// encode appends the Responses events for one neutral event.
func (r *responsesStreamEncoder) encode(dst []byte, ev *streamEvent) []byte {
	switch ev.kind {
	case streamStart:
		return r.start(dst)
	case streamText:
		return r.text(dst, ev.text)
	case streamToolStart:
		return r.toolStart(dst, ev)
	case streamToolArgs:
		return r.toolArgs(dst, ev)
	case streamFinish:
		r.stop, r.stopped = ev.stop, true
	case streamUsage:
		r.usage = ev.usage
	case streamEnd:
		return r.end(dst)
	}
	return dst
}

// event appends one event: its type, sequence number and the rest of its
// fields (body: JSON object members without braces).
func (r *responsesStreamEncoder) event(dst []byte, typ string, body []byte) []byte {
	data := append(r.s.scratch[:0], `{"type":`...)
	data = appendJSONText(data, typ)
	data = append(data, `,"sequence_number":`...)
	data = strconv.AppendInt(data, int64(r.seq), 10)
	r.seq++
	data = append(data, ',')
	data = append(data, body...)
	r.s.scratch = append(data, '}')
	return appendNamedEvent(dst, typ, r.s.scratch)
}

// itemBody begins an event's fields naming an item: item_id, output_index.
func (r *responsesStreamEncoder) itemBody(index int, extra int) []byte {
	body := make([]byte, 0, 64+extra)
	body = append(body, `"item_id":`...)
	body = appendJSONText(body, r.items[index].id)
	body = append(body, `,"output_index":`...)
	return strconv.AppendInt(body, int64(index), 10)
}

// start writes response.created and response.in_progress once.
func (r *responsesStreamEncoder) start(dst []byte) []byte {
	if r.started {
		return dst
	}
	r.started = true
	resp, _ := json.Marshal(r.response("in_progress", "", false))
	body := append([]byte(`"response":`), resp...)
	dst = r.event(dst, "response.created", body)
	return r.event(dst, "response.in_progress", body)
}

// text writes an output_text delta, adding a message item first when
// needed.
func (r *responsesStreamEncoder) text(dst []byte, text string) []byte {
	dst = r.start(dst)
	if r.open < 0 || r.items[r.open].kind != streamItemMessage {
		dst = r.add(dst, &streamItem{kind: streamItemMessage, id: mintStreamID("msg_")})
		body := append(r.itemBody(r.open, 0), `,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`...)
		dst = r.event(dst, "response.content_part.added", body)
	}
	r.s.committed = true
	item := r.items[r.open]
	item.buf = append(item.buf, text...)
	body := append(r.itemBody(r.open, len(text)), `,"content_index":0,"delta":`...)
	body = appendJSONText(body, text)
	return r.event(dst, "response.output_text.delta", append(body, `,"logprobs":[]`...))
}

// toolStart adds a function_call item (custom_tool_call for a custom
// tool).
func (r *responsesStreamEncoder) toolStart(dst []byte, ev *streamEvent) []byte {
	dst = r.start(dst)
	callID, tool := r.s.clientCall(ev.id, ev.name)
	item := &streamItem{kind: streamItemFunctionCall, id: mintStreamID("fc_"), callID: callID, name: tool.Name, namespace: tool.Namespace}
	if tool.Custom {
		item.kind, item.id = streamItemCustomToolCall, mintStreamID("ctc_")
	}
	if r.tools == nil {
		r.tools = map[int]int{}
	}
	r.tools[ev.index] = len(r.items)
	r.s.committed = true
	return r.add(dst, item)
}

// toolArgs writes a function_call_arguments delta. A custom tool's
// arguments (an object with its input string) are kept whole and sent as
// one input delta when its item is done.
func (r *responsesStreamEncoder) toolArgs(dst []byte, ev *streamEvent) []byte {
	index, ok := r.tools[ev.index]
	if !ok {
		return dst
	}
	item := r.items[index]
	item.buf = append(item.buf, ev.text...)
	if item.kind == streamItemCustomToolCall {
		return dst
	}
	r.s.committed = true
	return r.argsDelta(dst, index, ev.text)
}

// argsDelta writes a function_call_arguments delta for the item at index.
func (r *responsesStreamEncoder) argsDelta(dst []byte, index int, fragment string) []byte {
	body := append(r.itemBody(index, len(fragment)), `,"delta":`...)
	return r.event(dst, "response.function_call_arguments.delta", appendJSONText(body, fragment))
}

// add finishes the open item and writes output_item.added for item.
func (r *responsesStreamEncoder) add(dst []byte, item *streamItem) []byte {
	dst = r.finishItem(dst)
	r.open = len(r.items)
	r.items = append(r.items, item)
	return r.itemEvent(dst, "response.output_item.added", r.open)
}

// itemEvent writes output_item.added or .done with the item as it stands.
func (r *responsesStreamEncoder) itemEvent(dst []byte, typ string, index int) []byte {
	item, _ := json.Marshal(r.items[index].json())
	body := append([]byte(`"output_index":`), strconv.Itoa(index)...)
	body = append(body, `,"item":`...)
	return r.event(dst, typ, append(body, item...))
}

// finishItem writes the open item's .done events and output_item.done.
func (r *responsesStreamEncoder) finishItem(dst []byte) []byte {
	if r.open < 0 {
		return dst
	}
	index := r.open
	r.open = -1
	item := r.items[index]
	item.done = true
	switch item.kind {
	case streamItemMessage:
		dst = r.finishText(dst, index)
	case streamItemFunctionCall:
		if len(item.buf) == 0 {
			item.buf = append(item.buf, "{}"...)
			dst = r.argsDelta(dst, index, "{}")
		}
		body := append(r.itemBody(index, len(item.buf)), `,"name":`...)
		body = appendJSONText(body, item.name)
		body = append(body, `,"arguments":`...)
		dst = r.event(dst, "response.function_call_arguments.done", appendJSONText(body, string(item.buf)))
	case streamItemCustomToolCall:
		input := customInput(item.buf)
		if input != "" {
			body := append(r.itemBody(index, len(input)), `,"delta":`...)
			dst = r.event(dst, "response.custom_tool_call_input.delta", appendJSONText(body, input))
		}
		body := append(r.itemBody(index, len(input)), `,"input":`...)
		dst = r.event(dst, "response.custom_tool_call_input.done", appendJSONText(body, input))
	}
	return r.itemEvent(dst, "response.output_item.done", index)
}

// finishText writes a message item's output_text.done and
// content_part.done.
func (r *responsesStreamEncoder) finishText(dst []byte, index int) []byte {
	text := string(r.items[index].buf)
	body := append(r.itemBody(index, len(text)), `,"content_index":0,"text":`...)
	body = appendJSONText(body, text)
	dst = r.event(dst, "response.output_text.done", append(body, `,"logprobs":[]`...))
	body = append(r.itemBody(index, len(text)), `,"content_index":0,"part":{"type":"output_text","text":`...)
	body = appendJSONText(body, text)
	return r.event(dst, "response.content_part.done", append(body, `,"annotations":[]}`...))
}

// end finishes the open item and writes response.completed, or
// response.incomplete, with the whole output and the usage.
func (r *responsesStreamEncoder) end(dst []byte) []byte {
	dst = r.start(dst)
	dst = r.finishItem(dst)
	if !r.stopped {
		r.stop = stopFromChat("", len(r.tools) > 0)
	}
	status, reason := r.stop.responses()
	resp, _ := json.Marshal(r.response(status, reason, true))
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	return r.event(dst, typ, append([]byte(`"response":`), resp...))
}

// streamResponseOut is a Responses response object.
type streamResponseOut struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	CreatedAt         int64             `json:"created_at"`
	Status            string            `json:"status"`
	Error             *struct{}         `json:"error"`
	IncompleteDetails *streamIncomplete `json:"incomplete_details"`
	Model             string            `json:"model"`
	Output            []streamItemJSON  `json:"output"`
	ParallelToolCalls bool              `json:"parallel_tool_calls"`
	ToolChoice        string            `json:"tool_choice"`
	Tools             []struct{}        `json:"tools"`
	Usage             *responsesUsage   `json:"usage"`
}

// streamIncomplete is a response's incomplete_details.
type streamIncomplete struct {
	Reason string `json:"reason"`
}

// response is the response object: in progress (no output, no usage) or
// final.
func (r *responsesStreamEncoder) response(status, reason string, final bool) streamResponseOut {
	out := streamResponseOut{
		ID: r.s.id, Object: "response", CreatedAt: r.s.created, Status: status,
		Model: r.s.t.To.Model, Output: []streamItemJSON{}, ParallelToolCalls: true,
		ToolChoice: "auto", Tools: []struct{}{},
	}
	if reason != "" {
		out.IncompleteDetails = &streamIncomplete{Reason: reason}
	}
	if !final {
		return out
	}
	for _, item := range r.items {
		out.Output = append(out.Output, item.json())
	}
	usage := r.usage.responsesUsage()
	out.Usage = &usage
	return out
}

// streamItemJSON is an output item as JSON.
type streamItemJSON struct {
	ID        string            `json:"id"`
	Type      string            `json:"type"`
	Status    string            `json:"status,omitempty"`
	Role      string            `json:"role,omitempty"`
	Content   *[]streamTextPart `json:"content,omitempty"`
	CallID    string            `json:"call_id,omitempty"`
	Name      string            `json:"name,omitempty"`
	Namespace string            `json:"namespace,omitempty"`
	Arguments *string           `json:"arguments,omitempty"`
	Input     *string           `json:"input,omitempty"`
}

// streamTextPart is a message item's output_text part.
type streamTextPart struct {
	Type        string     `json:"type"`
	Text        string     `json:"text"`
	Annotations []struct{} `json:"annotations"`
	Logprobs    []struct{} `json:"logprobs"`
}

// json returns the item as it stands: in progress until it is done.
func (item *streamItem) json() streamItemJSON {
	out := streamItemJSON{ID: item.id, Status: "in_progress"}
	if item.done {
		out.Status = "completed"
	}
	text := string(item.buf)
	switch item.kind {
	case streamItemMessage:
		out.Type, out.Role = "message", "assistant"
		content := []streamTextPart{}
		if item.done {
			content = append(content, streamTextPart{Type: "output_text", Text: text, Annotations: []struct{}{}, Logprobs: []struct{}{}})
		}
		out.Content = &content
	case streamItemFunctionCall:
		out.Type, out.CallID, out.Name, out.Namespace = "function_call", item.callID, item.name, item.namespace
		if !item.done {
			text = ""
		}
		out.Arguments = &text
	case streamItemCustomToolCall:
		out.Type, out.CallID, out.Name, out.Status = "custom_tool_call", item.callID, item.name, ""
		if item.done {
			text = customInput(item.buf)
		} else {
			text = ""
		}
		out.Input = &text
	}
	return out
}
