package wire

// The chat completions request encoder.

type chatOut struct {
	Model               string              `json:"model"`
	Messages            []chatOutMessage    `json:"messages"`
	Tools               []chatTool          `json:"tools,omitempty"`
	ToolChoice          any                 `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool               `json:"parallel_tool_calls,omitempty"`
	MaxTokens           int                 `json:"max_tokens,omitempty"`
	MaxCompletionTokens int                 `json:"max_completion_tokens,omitempty"`
	Temperature         *float64            `json:"temperature,omitempty"`
	TopP                *float64            `json:"top_p,omitempty"`
	Stop                []string            `json:"stop,omitempty"`
	Stream              bool                `json:"stream,omitempty"`
	StreamOptions       *chatStreamOptions  `json:"stream_options,omitempty"`
	User                string              `json:"user,omitempty"`
	ReasoningEffort     string              `json:"reasoning_effort,omitempty"`
	ResponseFormat      *chatResponseFormat `json:"response_format,omitempty"`
}

// chatOutMessage's Content is a string, []chatPart, or nil (null).
type chatOutMessage struct {
	Role       string       `json:"role"`
	Content    any          `json:"content"`
	ToolCalls  []chatCallIn `json:"tool_calls,omitempty"`
	ToolCallID string       `json:"tool_call_id,omitempty"`
	lit        []byte       // a string Content's literal (literals.go)
}

type chatNamedChoice struct {
	Type     string  `json:"type"`
	Function toolRef `json:"function"`
}

// toolRef names a tool in a tool_choice.
type toolRef struct {
	Name string `json:"name"`
}

func (e *encoding) encodeChat() ([]byte, error) {
	req := e.req
	out := chatOut{Model: e.to.Model, Temperature: req.Temperature, TopP: req.TopP, Stop: req.Stop,
		Stream: req.Stream, User: req.User, ParallelToolCalls: req.Parallel}
	if e.to.MaxTokensField == "max_completion_tokens" {
		out.MaxCompletionTokens = req.MaxTokens
	} else {
		out.MaxTokens = req.MaxTokens
	}
	if req.Stream && e.to.StreamUsage {
		out.StreamOptions = &chatStreamOptions{IncludeUsage: true}
	}
	if req.Thinking != nil {
		out.ReasoningEffort = effortOf(req.Thinking)
	}
	if f := req.Format; f != nil {
		out.ResponseFormat = &chatResponseFormat{Type: "json_schema",
			JSONSchema: &chatJSONSchema{Name: formatName(f), Schema: f.Schema, Strict: f.Strict}}
	}
	if len(req.System) > 0 {
		system, lit := e.joinedText(req.System)
		out.Messages = append(out.Messages, chatOutMessage{Role: "system", Content: system, lit: lit})
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			out.Messages = append(out.Messages, e.chatAssistant(m.Parts))
		} else {
			out.Messages = e.chatUser(out.Messages, m.Parts)
		}
	}
	e.chatTools(&out)
	return appendChatOut(make([]byte, 0, e.size), &out), nil
}

// formatName is a structured output's name; OpenAI requires one.
func formatName(f *Format) string {
	if f.Name == "" {
		return "response"
	}
	return f.Name
}

// chatTools sets tools and tool_choice.
func (e *encoding) chatTools(out *chatOut) {
	for _, t := range e.req.Tools {
		out.Tools = append(out.Tools, chatTool{Type: "function", Function: &chatFunction{
			Name: e.toolName(t.Name, t.Namespace, t.Custom), Description: t.Description, Parameters: toolSchema(t),
			lit: e.lit(t.Description)}})
	}
	if len(out.Tools) == 0 {
		out.ParallelToolCalls = nil
		return
	}
	out.ToolChoice = e.openAIToolChoice(func(name string) any {
		return chatNamedChoice{Type: "function", Function: toolRef{Name: name}}
	})
}

// openAIToolChoice is tool_choice on the OpenAI wires: a mode, named for
// the one tool to call, or nil (left out).
func (e *encoding) openAIToolChoice(named func(name string) any) any {
	switch e.req.ToolChoice {
	case "auto", "none":
		return e.req.ToolChoice
	case "any":
		return "required"
	case "tool":
		return named(e.toolName(e.req.ToolName, "", false))
	}
	return nil
}

// chatAssistant is an assistant turn: its text, then its tool calls.
func (e *encoding) chatAssistant(parts []Part) chatOutMessage {
	m := chatOutMessage{Role: "assistant"}
	var text []Part
	for _, p := range parts {
		switch p.Kind {
		case Text:
			text = append(text, p)
		case ToolCall:
			args := string(callInput(p))
			m.ToolCalls = append(m.ToolCalls, chatCallIn{ID: mapID(p.CallID, Chat), Type: "function",
				Function: &chatFunction{Name: e.toolName(p.Name, p.Namespace, p.Custom), Arguments: &args}})
		}
	}
	if len(text) > 0 {
		m.Content, m.lit = e.joinedText(text)
	}
	return m
}

// chatUser appends a user turn: one tool message per tool result, then a
// user message with the rest and the images the results held.
func (e *encoding) chatUser(msgs []chatOutMessage, parts []Part) []chatOutMessage {
	var rest []chatPart
	for _, p := range parts {
		if p.Kind != ToolResult {
			rest = chatPartOut(rest, p)
			continue
		}
		var text []chatPart
		for _, c := range p.Content {
			if c.Kind == Text {
				text = append(text, chatPart{Type: "text", Text: c.Text})
			} else {
				rest = chatPartOut(rest, c)
			}
		}
		if p.IsError {
			text = markError(text, chatPart{Type: "text"}, func(p *chatPart) *string { return textIf(p.Type == "text", &p.Text) })
		}
		content, lit := e.chatContentOut(text)
		msgs = append(msgs, chatOutMessage{Role: "tool", ToolCallID: mapID(p.CallID, Chat), Content: content, lit: lit})
	}
	if len(rest) > 0 {
		content, lit := e.chatContentOut(rest)
		msgs = append(msgs, chatOutMessage{Role: "user", Content: content, lit: lit})
	}
	return msgs
}

// markError prefixes "Error: " to the text of the first part, blank put
// first where the first is no text part (text is nil for it): how the
// OpenAI wires carry is_error, which errorResult reads back.
func markError[T any](parts []T, blank T, text func(p *T) *string) []T {
	if len(parts) == 0 || text(&parts[0]) == nil {
		parts = append([]T{blank}, parts...)
	}
	s := text(&parts[0])
	*s = "Error: " + *s
	return parts
}

// textIf is a part's text when it is a text part, else nil.
func textIf(isText bool, text *string) *string {
	if isText {
		return text
	}
	return nil
}

// chatContentOut is a string for one text part (with its literal) or
// none, else the parts with their texts' literals: the texts are final
// here (markError has prefixed an error's).
func (e *encoding) chatContentOut(parts []chatPart) (any, []byte) {
	switch {
	case len(parts) == 0:
		return "", nil
	case len(parts) == 1 && parts[0].Type == "text":
		return parts[0].Text, e.lit(parts[0].Text)
	}
	for i := range parts {
		parts[i].lit = e.lit(parts[i].Text)
	}
	return parts, nil
}

// chatPartOut appends the chat content part of a text, image or file.
func chatPartOut(out []chatPart, p Part) []chatPart {
	switch p.Kind {
	case Text:
		return append(out, chatPart{Type: "text", Text: p.Text})
	case Image:
		return append(out, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: dataURL(p)}})
	case File:
		if p.URL != "" {
			return append(out, chatPart{Type: "text", Text: p.URL}) // chat files take data only
		}
		return append(out, chatPart{Type: "file", File: &chatFile{FileData: dataURL(p), Filename: fileName(p)}})
	}
	return out
}

// fileName is a document's file name; OpenAI requires one with file data.
func fileName(p Part) string {
	if p.FileName != "" {
		return p.FileName
	}
	return "document.pdf"
}
