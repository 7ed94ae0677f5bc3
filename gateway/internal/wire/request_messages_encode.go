package wire

import "encoding/json"

// The Anthropic Messages request encoder.

type msgOut struct {
	Model         string           `json:"model"`
	MaxTokens     int              `json:"max_tokens"`
	System        []msgBlock       `json:"system,omitempty"`
	Messages      []msgOutMessage  `json:"messages"`
	Tools         []msgTool        `json:"tools,omitempty"`
	ToolChoice    *msgToolChoice   `json:"tool_choice,omitempty"`
	Temperature   *float64         `json:"temperature,omitempty"`
	TopP          *float64         `json:"top_p,omitempty"`
	StopSequences []string         `json:"stop_sequences,omitempty"`
	Stream        bool             `json:"stream,omitempty"`
	Metadata      *msgMetadata     `json:"metadata,omitempty"`
	Thinking      *msgThinking     `json:"thinking,omitempty"`
	OutputConfig  *msgOutputConfig `json:"output_config,omitempty"`
}

// msgOutMessage's Content is []msgBlock, or []any when it holds thinking
// blocks kept byte-identical (json.RawMessage).
type msgOutMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// defaultMaxTokens is a Messages request's max_tokens when neither the
// client nor the target set one.
const defaultMaxTokens = 4096

func (e *encoding) encodeMessages() ([]byte, error) {
	req := e.req
	out := msgOut{Model: e.to.Model, MaxTokens: req.MaxTokens, Temperature: req.Temperature,
		StopSequences: req.Stop, Stream: req.Stream}
	if out.MaxTokens <= 0 {
		out.MaxTokens = max(e.to.DefaultMaxTokens, 0)
		if out.MaxTokens == 0 {
			out.MaxTokens = defaultMaxTokens
		}
	}
	if t := out.Temperature; t != nil && *t > 1 {
		out.Temperature = new(float64)
		*out.Temperature = 1
	}
	if req.TopP != nil {
		if req.Temperature != nil {
			e.drop("top_p")
		} else {
			out.TopP = req.TopP
		}
	}
	for _, p := range req.System {
		if p.Kind == Text && !blank(p.Text) {
			out.System = append(out.System, msgBlock{Type: "text", Text: p.Text, lit: e.lit(p.Text)})
		}
	}
	var toolTurnThinks bool
	out.Messages, toolTurnThinks = e.msgTurns()
	e.msgTools(&out)
	if req.User != "" {
		out.Metadata = &msgMetadata{UserID: req.User}
	}
	e.msgThinking(&out, toolTurnThinks)
	if f := req.Format; f != nil {
		out.OutputConfig = &msgOutputConfig{Format: &msgFormat{Type: "json_schema", Schema: f.Schema}}
	}
	return appendMsgOut(make([]byte, 0, e.size), &out), nil
}

// msgThinking sets thinking: a budget below max_tokens, left out when the
// last assistant turn that called a tool has no thinking block or the
// budget would be under Anthropic's minimum of 1,024.
func (e *encoding) msgThinking(out *msgOut, toolTurnThinks bool) {
	t := e.req.Thinking
	if t == nil {
		return
	}
	budget := min(budgetOf(t), out.MaxTokens-1)
	if !toolTurnThinks || budget < 1024 {
		e.drop("thinking")
		return
	}
	out.Thinking = &msgThinking{Type: "enabled", BudgetTokens: budget}
	if out.Temperature != nil && *out.Temperature != 1 {
		out.Temperature = nil // Anthropic refuses a temperature beside thinking
		e.drop("temperature")
	}
	if out.TopP != nil && *out.TopP < 0.95 {
		out.TopP = nil
		e.drop("top_p")
	}
}

// msgTools sets tools and tool_choice.
func (e *encoding) msgTools(out *msgOut) {
	for _, t := range e.req.Tools {
		out.Tools = append(out.Tools, msgTool{Name: e.toolName(t.Name, t.Namespace, t.Custom),
			Description: t.Description, InputSchema: toolSchema(t), lit: e.lit(t.Description)})
	}
	if len(out.Tools) == 0 {
		return
	}
	choice := &msgToolChoice{Type: e.req.ToolChoice}
	switch e.req.ToolChoice {
	case "":
		choice.Type = "auto"
	case "tool":
		choice.Name = e.toolName(e.req.ToolName, "", false)
	}
	if e.req.Parallel != nil && !*e.req.Parallel && choice.Type != "none" {
		choice.DisableParallelToolUse = true
	}
	if e.req.ToolChoice != "" || choice.DisableParallelToolUse {
		out.ToolChoice = choice
	}
}

// msgTurns encodes the turns: no empty turn, consecutive turns of one role
// merged, tool results first in a user turn. toolTurnThinks is false when
// the last assistant turn that called a tool carries no thinking block.
func (e *encoding) msgTurns() (msgs []msgOutMessage, toolTurnThinks bool) {
	toolTurnThinks = true
	var blocks []msgBlock
	var raws map[int]json.RawMessage
	role := ""
	flush := func() {
		if len(blocks) > 0 {
			msgs = append(msgs, msgOutMessage{Role: role, Content: msgContent(blocks, raws)})
		}
		blocks, raws = nil, nil
	}
	for _, m := range e.req.Messages {
		if m.Role != role {
			flush()
			role = m.Role
		}
		called, thinks := false, false
		for _, p := range m.Parts {
			if p.Kind == ThinkingBlock && e.to.Family && len(p.Raw) > 0 {
				if raws == nil {
					raws = map[int]json.RawMessage{}
				}
				raws[len(blocks)] = p.Raw
				blocks = append(blocks, msgBlock{})
				thinks = true
				continue
			}
			called = called || p.Kind == ToolCall
			blocks = e.msgPart(blocks, p)
		}
		if role == "assistant" && called {
			toolTurnThinks = thinks
		}
		if role == "user" {
			resultsFirst(blocks)
		}
	}
	flush()
	return msgs, toolTurnThinks
}

// msgContent is a turn's content: raws replace the blocks at their index.
func msgContent(blocks []msgBlock, raws map[int]json.RawMessage) any {
	if raws == nil {
		return blocks
	}
	content := make([]any, len(blocks))
	for i, b := range blocks {
		if raw, ok := raws[i]; ok {
			content[i] = raw
		} else {
			content[i] = b
		}
	}
	return content
}

// resultsFirst moves the tool_result blocks of a user turn to its start,
// keeping their order and the order of the others.
func resultsFirst(blocks []msgBlock) {
	var results, rest []msgBlock
	for _, b := range blocks {
		if b.Type == "tool_result" {
			results = append(results, b)
		} else {
			rest = append(rest, b)
		}
	}
	if len(results) > 0 && len(rest) > 0 {
		copy(blocks, results)
		copy(blocks[len(results):], rest)
	}
}

// msgPart appends the block of one part; blank text, reasoning items and
// thinking blocks for other upstreams are left out.
func (e *encoding) msgPart(blocks []msgBlock, p Part) []msgBlock {
	switch p.Kind {
	case Text:
		if !blank(p.Text) {
			blocks = append(blocks, msgBlock{Type: "text", Text: p.Text, lit: e.lit(p.Text)})
		}
	case Image, File:
		blocks = append(blocks, msgMedia(p))
	case ToolCall:
		blocks = append(blocks, msgBlock{Type: "tool_use", ID: mapID(p.CallID, Messages),
			Name: e.toolName(p.Name, p.Namespace, p.Custom), Input: callInput(p)})
	case ToolResult:
		b := msgBlock{Type: "tool_result", ToolUseID: mapID(p.CallID, Messages), IsError: p.IsError}
		var content []msgBlock
		for _, c := range p.Content {
			content = e.msgPart(content, c)
		}
		if len(content) > 0 {
			b.Content = appendMsgBlocks(nil, content)
		}
		blocks = append(blocks, b)
	}
	return blocks
}

// msgMedia is an image or document block.
func msgMedia(p Part) msgBlock {
	b := msgBlock{Type: "image", Source: &msgSource{Type: "base64", MediaType: p.MediaType, Data: p.Data}}
	if p.Kind == File {
		b.Type, b.Title = "document", p.FileName
	}
	if p.URL != "" {
		b.Source = &msgSource{Type: "url", URL: p.URL}
	}
	return b
}
