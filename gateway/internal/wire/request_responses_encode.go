package wire

import "encoding/json"

// The Responses request encoder. Responses has no stop parameter: the
// stop sequences stay in Translation.stops and the answer is cut locally.

type respOut struct {
	Model             string         `json:"model"`
	Instructions      string         `json:"instructions,omitempty"`
	Input             []any          `json:"input"`
	Tools             []respOutTool  `json:"tools,omitempty"`
	ToolChoice        any            `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool          `json:"parallel_tool_calls,omitempty"`
	MaxOutputTokens   int            `json:"max_output_tokens,omitempty"`
	Temperature       *float64       `json:"temperature,omitempty"`
	TopP              *float64       `json:"top_p,omitempty"`
	Stream            bool           `json:"stream,omitempty"`
	User              string         `json:"user,omitempty"`
	Reasoning         *respReasoning `json:"reasoning,omitempty"`
	Text              *respText      `json:"text,omitempty"`
	instructionsLit   []byte         // Instructions' literal (literals.go)
}

type respOutTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
	lit         []byte          // Description's literal (literals.go)
}

// respOutItem is an input item, encoded: a message, a function_call or a
// function_call_output.
type respOutItem struct {
	Type      string `json:"type"`
	Role      string `json:"role,omitempty"`
	Content   any    `json:"content,omitempty"`
	CallID    string `json:"call_id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
	Output    any    `json:"output,omitempty"`
	lit       []byte // a string Content's or Output's literal (literals.go)
}

// minOutputTokens is the smallest max_output_tokens Responses accepts.
const minOutputTokens = 16

func (e *encoding) encodeResponses() ([]byte, error) {
	req := e.req
	out := respOut{Model: e.to.Model, Temperature: req.Temperature,
		TopP: req.TopP, Stream: req.Stream, User: req.User, ParallelToolCalls: req.Parallel}
	out.Instructions, out.instructionsLit = e.joinedText(req.System)
	if req.MaxTokens > 0 {
		out.MaxOutputTokens = max(req.MaxTokens, minOutputTokens)
	}
	if req.Thinking != nil {
		out.Reasoning = &respReasoning{Effort: effortOf(req.Thinking)}
	}
	if f := req.Format; f != nil {
		strict := f.Strict
		out.Text = &respText{Format: &respFormat{Type: "json_schema", Name: formatName(f), Schema: f.Schema, Strict: &strict}}
	}
	out.Input = make([]any, 0, 2*len(req.Messages))
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			out.Input = e.respAssistant(out.Input, m.Parts)
		} else {
			out.Input = e.respUser(out.Input, m.Parts)
		}
	}
	e.respTools(&out)
	return appendRespOut(make([]byte, 0, e.size), &out), nil
}

// respTools sets tools and tool_choice.
func (e *encoding) respTools(out *respOut) {
	for _, t := range e.req.Tools {
		out.Tools = append(out.Tools, respOutTool{Type: "function", Name: e.toolName(t.Name, t.Namespace, t.Custom),
			Description: t.Description, Parameters: toolSchema(t), lit: e.lit(t.Description)})
	}
	if len(out.Tools) == 0 {
		out.ParallelToolCalls = nil
		return
	}
	out.ToolChoice = e.openAIToolChoice(func(name string) any { return respNamedChoice{Type: "function", Name: name} })
}

type respNamedChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// respAssistant appends an assistant turn's items in order: its text as
// messages, its tool calls as function_call items, its reasoning items.
func (e *encoding) respAssistant(items []any, parts []Part) []any {
	var text []Part
	flush := func() {
		if len(text) > 0 {
			content, lit := e.joinedText(text)
			items = append(items, respOutItem{Type: "message", Role: "assistant", Content: content, lit: lit})
			text = nil
		}
	}
	for _, p := range parts {
		switch p.Kind {
		case Text:
			text = append(text, p)
		case ToolCall:
			flush()
			items = append(items, respOutItem{Type: "function_call", CallID: mapID(p.CallID, Responses),
				Name: e.toolName(p.Name, p.Namespace, p.Custom), Arguments: string(callInput(p))})
		case Reasoning:
			flush()
			if len(p.Raw) > 0 {
				items = append(items, p.Raw)
			}
		}
	}
	flush()
	return items
}

// respUser appends a user turn: one function_call_output per tool
// result, then a user message with the rest.
func (e *encoding) respUser(items []any, parts []Part) []any {
	var rest []respPart
	for _, p := range parts {
		if p.Kind != ToolResult {
			rest = respPartOut(rest, p)
			continue
		}
		var output []respPart
		for _, c := range p.Content {
			output = respPartOut(output, c)
		}
		if p.IsError {
			output = markError(output, respPart{Type: "input_text"}, func(p *respPart) *string {
				return textIf(p.Type == "input_text", &p.Text)
			})
		}
		value, lit := e.respOutput(output)
		items = append(items, respOutItem{Type: "function_call_output", CallID: mapID(p.CallID, Responses),
			Output: value, lit: lit})
	}
	if len(rest) > 0 {
		items = append(items, respOutItem{Type: "message", Role: "user", Content: e.respLits(rest)})
	}
	return items
}

// respOutput is a tool result's output: a string when it is text only
// (with its literal), else the parts with their texts' literals.
func (e *encoding) respOutput(parts []respPart) (any, []byte) {
	text := true
	for _, p := range parts {
		text = text && p.Type == "input_text"
	}
	switch {
	case len(parts) == 0:
		return "", nil
	case text && len(parts) == 1:
		return parts[0].Text, e.lit(parts[0].Text)
	}
	return e.respLits(parts), nil
}

// respLits sets the literals of parts' texts, which are final here
// (markError has prefixed an error's).
func (e *encoding) respLits(parts []respPart) []respPart {
	for i := range parts {
		parts[i].lit = e.lit(parts[i].Text)
	}
	return parts
}

// respPartOut appends the input part of a text, image or file.
func respPartOut(out []respPart, p Part) []respPart {
	switch p.Kind {
	case Text:
		return append(out, respPart{Type: "input_text", Text: p.Text})
	case Image:
		return append(out, respPart{Type: "input_image", ImageURL: dataURL(p)})
	case File:
		if p.URL != "" {
			return append(out, respPart{Type: "input_file", FileURL: p.URL, Filename: p.FileName})
		}
		return append(out, respPart{Type: "input_file", FileData: dataURL(p), Filename: fileName(p)})
	}
	return out
}
