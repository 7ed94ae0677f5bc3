package wire

import (
	"encoding/json"
)

// Upstream stream decoders: each wire's events into neutral stream events.

// chatStreamDecoder decodes chat completion chunks.
type chatStreamDecoder struct {
	started bool
	calls   map[int]int     // the upstream's tool call index → the call's neutral index
	ids     []string        // the calls begun, by neutral index: their ids
	chunk   streamChatChunk // reused: its choices' storage is kept
}

// streamChatChunk is the part of a chat chunk the decoder reads.
type streamChatChunk struct {
	ID      string             `json:"id"`
	Model   string             `json:"model"`
	Choices []streamChatChoice `json:"choices"`
	Usage   *chatUsage         `json:"usage"`
	Error   json.RawMessage    `json:"error"`
}

// streamChatChoice is a chunk's choice.
type streamChatChoice struct {
	Index int `json:"index"`
	Delta struct {
		Content   string `json:"content"`
		Refusal   string `json:"refusal"`
		Reasoning string `json:"reasoning_content"`
		ToolCalls []struct {
			Index    int              `json:"index"`
			ID       string           `json:"id"`
			Function chatCallFunction `json:"function"`
		} `json:"tool_calls"`
	} `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

// decode reads one chunk, or [DONE]; an error chunk yields nothing.
func (d *chatStreamDecoder) decode(e sseEvent, out []streamEvent) ([]streamEvent, error) {
	if isChatDone(e.data) {
		return append(out, streamEvent{kind: streamEnd}), nil
	}
	choices := d.chunk.Choices[:cap(d.chunk.Choices)]
	clear(choices)
	d.chunk = streamChatChunk{Choices: choices[:0]}
	c := &d.chunk
	if err := json.Unmarshal(e.data, c); err != nil {
		return out, err
	}
	if isSetJSON(c.Error) {
		return out, nil
	}
	if !d.started {
		d.started = true
		out = append(out, streamEvent{kind: streamStart, id: c.ID, model: c.Model})
	}
	for i := range c.Choices {
		if c.Choices[i].Index == 0 {
			out = d.choice(&c.Choices[i], out)
		}
	}
	if c.Usage != nil {
		out = append(out, streamEvent{kind: streamUsage, usage: c.Usage.neutral()})
	}
	return out, nil
}

// choice decodes the first choice's delta and finish reason.
func (d *chatStreamDecoder) choice(ch *streamChatChoice, out []streamEvent) []streamEvent {
	out = appendStreamText(out, streamThinking, ch.Delta.Reasoning)
	out = appendStreamText(out, streamText, ch.Delta.Content)
	out = appendStreamText(out, streamText, ch.Delta.Refusal)
	for _, tc := range ch.Delta.ToolCalls {
		n, ok := d.calls[tc.Index]
		if !ok || tc.ID != "" && d.ids[n] != "" && tc.ID != d.ids[n] {
			n = d.begin(tc.Index, tc.ID)
			out = append(out, streamEvent{kind: streamToolStart, index: n, id: tc.ID, name: tc.Function.Name})
		}
		if tc.Function.Arguments != "" {
			out = append(out, streamEvent{kind: streamToolArgs, index: n, text: tc.Function.Arguments})
		}
	}
	if ch.FinishReason != "" {
		out = append(out, streamEvent{kind: streamFinish, stop: stopFromChat(ch.FinishReason, len(d.ids) > 0)})
	}
	return out
}

// begin numbers a call that begins at the upstream's index: a fragment
// with another call's id at an index already begun begins a new call too
// (servers that send each call whole at index 0, or with no index).
func (d *chatStreamDecoder) begin(index int, id string) int {
	if d.calls == nil {
		d.calls = map[int]int{}
	}
	n := len(d.ids)
	d.calls[index] = n
	d.ids = append(d.ids, id)
	return n
}

// appendStreamText appends a text or thinking event unless text is empty.
func appendStreamText(out []streamEvent, kind streamKind, text string) []streamEvent {
	if text == "" {
		return out
	}
	return append(out, streamEvent{kind: kind, text: text})
}

// messagesStreamDecoder decodes Messages stream events.
type messagesStreamDecoder struct {
	tools   map[int]bool // the tool_use block indexes
	hasTool bool
	usage   Usage
}

// streamMessagesEvent is the part of a Messages stream event the decoder reads.
type streamMessagesEvent struct {
	Type    string `json:"type"`
	Message struct {
		ID    string        `json:"id"`
		Model string        `json:"model"`
		Usage messagesUsage `json:"usage"`
	} `json:"message"`
	Index        int `json:"index"`
	ContentBlock struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Name string `json:"name"`
		Text string `json:"text"`
	} `json:"content_block"`
	Delta struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *streamUsageDelta `json:"usage"`
}

// streamUsageDelta is a message_delta's usage: every count cumulative,
// the input ones present only when they changed.
type streamUsageDelta struct {
	OutputTokens             int  `json:"output_tokens"`
	InputTokens              *int `json:"input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
}

// decode reads one Messages event by its data's type.
func (d *messagesStreamDecoder) decode(e sseEvent, out []streamEvent) ([]streamEvent, error) {
	var m streamMessagesEvent
	if err := json.Unmarshal(e.data, &m); err != nil {
		return out, err
	}
	switch m.Type {
	case "message_start":
		d.usage = m.Message.Usage.neutral()
		return append(out, streamEvent{kind: streamStart, id: m.Message.ID, model: m.Message.Model, usage: d.usage}), nil
	case "content_block_start":
		return d.blockStart(&m, out), nil
	case "content_block_delta":
		return d.blockDelta(&m, out), nil
	case "message_delta":
		if m.Delta.StopReason != "" {
			out = append(out, streamEvent{kind: streamFinish, stop: stopFromMessages(m.Delta.StopReason)})
		}
		if m.Usage != nil {
			d.mergeUsage(m.Usage)
			out = append(out, streamEvent{kind: streamUsage, usage: d.usage})
		}
	case "message_stop":
		out = append(out, streamEvent{kind: streamEnd})
	}
	return out, nil // ping, content_block_stop, error and unknown events
}

// blockStart decodes a content_block_start: text and tool_use blocks begin
// content; thinking and server tool blocks are dropped.
func (d *messagesStreamDecoder) blockStart(m *streamMessagesEvent, out []streamEvent) []streamEvent {
	switch m.ContentBlock.Type {
	case "text":
		return appendStreamText(out, streamText, m.ContentBlock.Text)
	case "tool_use":
		d.tools = addToIndexSet(d.tools, m.Index)
		d.hasTool = true
		return append(out, streamEvent{kind: streamToolStart, index: m.Index, id: m.ContentBlock.ID, name: m.ContentBlock.Name})
	}
	return out
}

// blockDelta decodes a content_block_delta.
func (d *messagesStreamDecoder) blockDelta(m *streamMessagesEvent, out []streamEvent) []streamEvent {
	switch m.Delta.Type {
	case "text_delta":
		return appendStreamText(out, streamText, m.Delta.Text)
	case "input_json_delta":
		if d.tools[m.Index] && m.Delta.PartialJSON != "" {
			return append(out, streamEvent{kind: streamToolArgs, index: m.Index, text: m.Delta.PartialJSON})
		}
	case "thinking_delta":
		return appendStreamText(out, streamThinking, m.Delta.Thinking)
	}
	return out // signature_delta, citations_delta
}

// mergeUsage applies a message_delta's cumulative usage.
func (d *messagesStreamDecoder) mergeUsage(u *streamUsageDelta) {
	d.usage.Output = max(u.OutputTokens, 0)
	if u.InputTokens != nil {
		d.usage.Input = max(*u.InputTokens, 0)
	}
	if u.CacheReadInputTokens != nil {
		d.usage.CacheRead = max(*u.CacheReadInputTokens, 0)
	}
	if u.CacheCreationInputTokens != nil {
		d.usage.CacheWrite = max(*u.CacheCreationInputTokens, 0)
	}
}
