package wire

import (
	"encoding/json"
	"strconv"
)

// The Messages client encoder: message_start, content blocks in order
// (each closed before the next opens), message_delta, message_stop.

// messagesStreamEncoder writes a Messages stream.
type messagesStreamEncoder struct {
	s       *Transcoder
	started bool
	open    int  // the open block's index, -1 when none
	openTxt bool // the open block is a text block
	next    int  // the next block's index
	tools   map[int]int
	stop    Stop
	stopped bool // the stop reason is known
	usage   Usage
	counted bool // the usage came from the upstream
	// space is whitespace held before a text block opens: a block of
	// whitespace only is never sent (the client's next request would carry
	// it to Anthropic, which refuses it).
	space string
}

// newMessagesStreamEncoder starts with no block open.
func newMessagesStreamEncoder(s *Transcoder) *messagesStreamEncoder {
	return &messagesStreamEncoder{s: s, open: -1}
}

// encode appends the Messages events for one neutral event.
func (m *messagesStreamEncoder) encode(dst []byte, ev *streamEvent) []byte {
	switch ev.kind {
	case streamStart:
		m.usage = ev.usage
		return m.start(dst)
	case streamText:
		return m.text(dst, ev.text)
	case streamToolStart:
		return m.toolStart(dst, ev)
	case streamToolArgs:
		return m.toolArgs(dst, ev)
	case streamFinish:
		m.stop, m.stopped = ev.stop, true
	case streamUsage:
		m.usage, m.counted = ev.usage, true
	case streamEnd:
		return m.end(dst)
	}
	return dst
}

// streamMessageStart is message_start's message.
type streamMessageStart struct {
	ID           string        `json:"id"`
	Type         string        `json:"type"`
	Role         string        `json:"role"`
	Model        string        `json:"model"`
	Content      []struct{}    `json:"content"`
	StopReason   *string       `json:"stop_reason"`
	StopSequence *string       `json:"stop_sequence"`
	Usage        messagesUsage `json:"usage"`
}

// start writes message_start once. Its input tokens are the upstream's
// when it reported them at the start, the request's estimate otherwise.
func (m *messagesStreamEncoder) start(dst []byte) []byte {
	if m.started {
		return dst
	}
	m.started = true
	u := m.usage.messagesUsage()
	if m.usage.openAIPrompt() == 0 {
		u.InputTokens = m.s.t.estimate
	}
	u.OutputTokens = max(u.OutputTokens, 1)
	msg := streamMessageStart{ID: m.s.id, Type: "message", Role: "assistant", Model: m.s.t.To.Model, Content: []struct{}{}, Usage: u}
	data, _ := json.Marshal(struct {
		Type    string             `json:"type"`
		Message streamMessageStart `json:"message"`
	}{"message_start", msg})
	return appendNamedEvent(dst, "message_start", data)
}

// text writes a text delta, opening a text block first when needed: at
// the first text that is not whitespace only.
func (m *messagesStreamEncoder) text(dst []byte, text string) []byte {
	dst = m.start(dst)
	if m.open < 0 || !m.openTxt {
		if text = m.space + text; blank(text) {
			m.space = text
			return dst
		}
		m.space = ""
		dst = m.closeBlock(dst)
		dst = m.openBlock(dst, true, []byte(`{"type":"text","text":""}`))
	}
	m.s.committed = true
	data := m.deltaHead(m.s.scratch[:0], m.open)
	data = append(data, `{"type":"text_delta","text":`...)
	data = appendJSONText(data, text)
	data = append(data, "}}"...)
	m.s.scratch = data
	return appendNamedEvent(dst, "content_block_delta", data)
}

// toolStart closes the open block and opens a tool_use block.
func (m *messagesStreamEncoder) toolStart(dst []byte, ev *streamEvent) []byte {
	dst = m.start(dst)
	dst = m.closeBlock(dst)
	m.space = ""
	callID, tool := m.s.clientCall(ev.id, ev.name)
	block := append([]byte(`{"type":"tool_use","id":`), appendJSONText(nil, callID)...)
	block = append(block, `,"name":`...)
	block = appendJSONText(block, tool.Name)
	block = append(block, `,"input":{}}`...)
	if m.tools == nil {
		m.tools = map[int]int{}
	}
	m.tools[ev.index] = m.next
	m.s.committed = true
	return m.openBlock(dst, false, block)
}

// toolArgs writes an input_json_delta to the call's block (even one
// already closed: no argument delta is dropped).
func (m *messagesStreamEncoder) toolArgs(dst []byte, ev *streamEvent) []byte {
	index, ok := m.tools[ev.index]
	if !ok {
		return dst
	}
	m.s.committed = true
	data := m.deltaHead(m.s.scratch[:0], index)
	data = append(data, `{"type":"input_json_delta","partial_json":`...)
	data = appendJSONText(data, ev.text)
	data = append(data, "}}"...)
	m.s.scratch = data
	return appendNamedEvent(dst, "content_block_delta", data)
}

// deltaHead begins a content_block_delta's data up to its delta.
func (m *messagesStreamEncoder) deltaHead(data []byte, index int) []byte {
	data = append(data, `{"type":"content_block_delta","index":`...)
	data = strconv.AppendInt(data, int64(index), 10)
	return append(data, `,"delta":`...)
}

// openBlock writes content_block_start for the next block.
func (m *messagesStreamEncoder) openBlock(dst []byte, text bool, block []byte) []byte {
	m.open, m.openTxt = m.next, text
	m.next++
	data := append([]byte(`{"type":"content_block_start","index":`), strconv.Itoa(m.open)...)
	data = append(data, `,"content_block":`...)
	data = append(data, block...)
	data = append(data, '}')
	return appendNamedEvent(dst, "content_block_start", data)
}

// closeBlock writes content_block_stop for the open block, if any.
func (m *messagesStreamEncoder) closeBlock(dst []byte) []byte {
	if m.open < 0 {
		return dst
	}
	data := append([]byte(`{"type":"content_block_stop","index":`), strconv.Itoa(m.open)...)
	m.open = -1
	return appendNamedEvent(dst, "content_block_stop", append(data, '}'))
}

// streamMessageDelta is message_delta's data.
type streamMessageDelta struct {
	Type  string `json:"type"`
	Delta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
	} `json:"delta"`
	Usage messagesUsage `json:"usage"`
}

// end closes the open block and writes message_delta and message_stop.
func (m *messagesStreamEncoder) end(dst []byte) []byte {
	dst = m.start(dst)
	dst = m.closeBlock(dst)
	if !m.stopped {
		m.stop = stopFromChat("", len(m.tools) > 0)
	}
	var out streamMessageDelta
	out.Type = "message_delta"
	out.Delta.StopReason = m.stop.messages()
	if seq := m.s.stopSequence(); seq != "" && m.stop == StopSequence {
		out.Delta.StopSequence = &seq
	}
	out.Usage = m.usage.messagesUsage()
	if !m.counted || m.usage.openAIPrompt() == 0 {
		out.Usage.InputTokens = max(out.Usage.InputTokens, m.s.t.estimate)
	}
	data, _ := json.Marshal(out)
	dst = appendNamedEvent(dst, "message_delta", data)
	return appendNamedEvent(dst, "message_stop", []byte(`{"type":"message_stop"}`))
}
