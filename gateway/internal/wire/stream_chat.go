package wire

import (
	"encoding/json"
	"strconv"
)

// The chat client encoder: the role chunk, content and tool-call deltas,
// the finish chunk, a usage chunk when the client asked, [DONE]. A custom
// tool's call is a type custom call: its first fragment has custom.name,
// and its raw input (the "input" of the arguments the upstream streams,
// kept whole) is one custom.input fragment before the finish chunk, as a
// Responses client gets it in one delta when its item is done.

// chatStreamEncoder writes a chat completion stream.
type chatStreamEncoder struct {
	s        *Transcoder
	head     []byte // every chunk's opening up to its choices
	started  bool
	tools    map[int]*streamChatTool // by the upstream's index
	order    []*streamChatTool       // the calls in the client's numbering
	finished bool                    // the finish chunk was sent
	stop     Stop
	usage    Usage
}

// streamChatTool is one tool call of the client's stream.
type streamChatTool struct {
	index   int    // the client's tool_calls index
	hasArgs bool   // an arguments fragment was sent
	custom  bool   // a custom tool call
	args    []byte // a custom call's arguments, kept whole
}

// newChatStreamEncoder prepares the chunks' common opening.
func newChatStreamEncoder(s *Transcoder) *chatStreamEncoder {
	head := append([]byte(`{"id":`), appendJSONText(nil, s.id)...)
	head = append(head, `,"object":"chat.completion.chunk","created":`...)
	head = strconv.AppendInt(head, s.created, 10)
	head = append(head, `,"model":`...)
	head = appendJSONText(head, s.t.To.Model)
	head = append(head, `,"choices":[`...)
	return &chatStreamEncoder{s: s, head: head}
}

// encode appends the chunks for one neutral event.
func (c *chatStreamEncoder) encode(dst []byte, ev *streamEvent) []byte {
	switch ev.kind {
	case streamStart:
		return c.start(dst)
	case streamText:
		dst = c.start(dst)
		c.s.committed = true
		delta := appendJSONText(append(make([]byte, 0, 16+len(ev.text)), `{"content":`...), ev.text)
		return c.chunk(dst, append(delta, '}'), "")
	case streamToolStart:
		return c.toolStart(dst, ev)
	case streamToolArgs:
		if t := c.tools[ev.index]; t != nil && t.custom {
			t.args = append(t.args, ev.text...)
		} else if t != nil {
			c.s.committed = true
			t.hasArgs = true
			return c.chunk(dst, c.toolDelta(t.index, argsField, ev.text), "")
		}
	case streamFinish:
		c.stop = settleStop(ev.stop, len(c.order))
		return c.finish(dst)
	case streamUsage:
		c.usage = ev.usage
	case streamEnd:
		return c.end(dst)
	}
	return dst
}

// chunk appends one chunk with one choice: its delta and finish_reason
// ("" for null).
func (c *chatStreamEncoder) chunk(dst, delta []byte, finish string) []byte {
	data := append(c.s.scratch[:0], c.head...)
	data = append(data, `{"index":0,"delta":`...)
	data = append(data, delta...)
	data = append(data, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		data = append(data, "null"...)
	} else {
		data = appendJSONText(data, finish)
	}
	c.s.scratch = append(data, "}]}"...)
	return appendDataEvent(dst, c.s.scratch)
}

// start writes the role chunk once.
func (c *chatStreamEncoder) start(dst []byte) []byte {
	if c.started {
		return dst
	}
	c.started = true
	return c.chunk(dst, []byte(`{"role":"assistant","content":""}`), "")
}

// toolStart writes a call's first fragment: its index, id, type and name.
func (c *chatStreamEncoder) toolStart(dst []byte, ev *streamEvent) []byte {
	dst = c.start(dst)
	callID, tool := c.s.clientCall(ev.id, ev.name)
	t := &streamChatTool{index: len(c.order), custom: tool.Custom}
	if c.tools == nil {
		c.tools = map[int]*streamChatTool{}
	}
	c.tools[ev.index] = t
	c.order = append(c.order, t)
	c.s.committed = true
	delta := append([]byte(`{"tool_calls":[{"index":`), strconv.Itoa(t.index)...)
	delta = append(delta, `,"id":`...)
	delta = appendJSONText(delta, callID)
	if t.custom {
		delta = append(delta, `,"type":"custom","custom":{"name":`...)
		delta = appendJSONText(delta, tool.Name)
		return c.chunk(dst, append(delta, `,"input":""}}]}`...), "")
	}
	delta = append(delta, `,"type":"function","function":{"name":`...)
	delta = appendJSONText(delta, tool.Name)
	delta = append(delta, `,"arguments":""}}]}`...)
	return c.chunk(dst, delta, "")
}

// The fields a tool_calls delta carries its text in: a function call's
// arguments fragment, or a custom call's whole input.
const (
	argsField  = `,"function":{"arguments":`
	inputField = `,"custom":{"input":`
)

// toolDelta is a tool_calls delta for the call at index carrying text in
// field (argsField or inputField).
func (c *chatStreamEncoder) toolDelta(index int, field, text string) []byte {
	delta := make([]byte, 0, 64+len(text))
	delta = append(delta, `{"tool_calls":[{"index":`...)
	delta = strconv.AppendInt(delta, int64(index), 10)
	delta = append(delta, field...)
	delta = appendJSONText(delta, text)
	return append(delta, "}}]}"...)
}

// finish writes the finish chunk once, after "{}" arguments for any call
// that had none and each custom call's input.
func (c *chatStreamEncoder) finish(dst []byte) []byte {
	if c.finished {
		return dst
	}
	dst = c.start(dst)
	c.finished = true
	for _, t := range c.order {
		if t.hasArgs {
			continue
		}
		t.hasArgs = true
		if !t.custom {
			dst = c.chunk(dst, c.toolDelta(t.index, argsField, "{}"), "")
		} else if input := customInput(t.args); input != "" {
			dst = c.chunk(dst, c.toolDelta(t.index, inputField, input), "")
		}
	}
	return c.chunk(dst, []byte(`{}`), c.stop.chat())
}

// end writes the finish chunk if not sent, the usage chunk when the client
// asked for one, and [DONE].
func (c *chatStreamEncoder) end(dst []byte) []byte {
	if !c.finished {
		c.stop = stopFromChat("", len(c.order) > 0)
		dst = c.finish(dst)
	}
	if c.s.t.streamUsage {
		usage, _ := json.Marshal(c.usage.chatUsage())
		data := append(append([]byte(nil), c.head[:len(c.head)-1]...), "[]"...)
		data = append(data, `,"usage":`...)
		data = append(data, usage...)
		dst = appendDataEvent(dst, append(data, '}'))
	}
	return appendDataEvent(dst, []byte("[DONE]"))
}
