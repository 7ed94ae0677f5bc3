package wire

import (
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
)

// The Anthropic Messages request decoder (the encoder is in
// request_messages_encode.go).

type msgRequest struct {
	Model         string           `json:"model"`
	System        json.RawMessage  `json:"system"`
	Messages      []msgMessage     `json:"messages"`
	Tools         []msgTool        `json:"tools"`
	ToolChoice    *msgToolChoice   `json:"tool_choice"`
	MaxTokens     int              `json:"max_tokens"`
	Temperature   *float64         `json:"temperature"`
	TopP          *float64         `json:"top_p"`
	StopSequences []string         `json:"stop_sequences"`
	Stream        bool             `json:"stream"`
	Metadata      *msgMetadata     `json:"metadata"`
	Thinking      *msgThinking     `json:"thinking"`
	OutputConfig  *msgOutputConfig `json:"output_config"`

	systemList *msgList // System's blocks, when the fast reader read them
}

// msgList is a content list of blocks the fast reader decoded as it read
// the request (request_messages_read.go), with each block's bytes: its
// content is then not read a second time.
type msgList struct {
	blocks []msgBlock
	raws   []json.RawMessage
}

type msgMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	list    *msgList        // Content's blocks, when the fast reader read them
}

type msgMetadata struct {
	UserID string `json:"user_id,omitempty"`
}

type msgTool struct {
	Type         string          `json:"type,omitempty"`
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
	lit          []byte          // Description's literal, encoded (literals.go)
}

type msgToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use,omitempty"`
}

type msgThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens,omitempty"`
}

type msgOutputConfig struct {
	Format *msgFormat `json:"format,omitempty"`
	Effort string     `json:"effort,omitempty"`
}

type msgFormat struct {
	Type   string          `json:"type"`
	Schema json.RawMessage `json:"schema,omitempty"`
}

// msgBlock is a content block, decoded and encoded.
type msgBlock struct {
	Type         string          `json:"type"`
	Text         string          `json:"text,omitempty"`
	Source       *msgSource      `json:"source,omitempty"`
	Title        string          `json:"title,omitempty"`
	ID           string          `json:"id,omitempty"`
	Name         string          `json:"name,omitempty"`
	Input        json.RawMessage `json:"input,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`
	Content      json.RawMessage `json:"content,omitempty"`
	IsError      bool            `json:"is_error,omitempty"`
	Signature    string          `json:"signature,omitempty"`
	CacheControl json.RawMessage `json:"cache_control,omitempty"`
	list         *msgList        // Content's blocks, when the fast reader read them
	lit          []byte          // Text's literal, encoded (literals.go)
}

type msgSource struct {
	Type      string          `json:"type"`
	MediaType string          `json:"media_type,omitempty"`
	Data      string          `json:"data,omitempty"`
	URL       string          `json:"url,omitempty"`
	FileID    string          `json:"file_id,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
}

// sourceString is the Type of a source given as a string: a search_result
// block's source (its URL, in URL), where an image or a document has an
// object.
const sourceString = "string"

// UnmarshalJSON reads a source object, or a source string as sourceString.
func (s *msgSource) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		*s = msgSource{Type: sourceString}
		return json.Unmarshal(b, &s.URL)
	}
	type object msgSource // without this method
	return json.Unmarshal(b, (*object)(s))
}

var msgKnown = map[string]bool{
	"model": true, "messages": true, "system": true, "tools": true, "tool_choice": true,
	"max_tokens": true, "temperature": true, "top_p": true, "stop_sequences": true,
	"stream": true, "metadata": true, "thinking": true, "output_config": true,
}

// decodeMessages decodes an Anthropic Messages request.
func decodeMessages(body []byte) (*Request, error) {
	var in msgRequest
	lits := literals{}
	keys, err := readRequestObject(body, &in, lits, readMsgRequest)
	if err != nil {
		return nil, err
	}
	req := &Request{lits: lits, Model: in.Model, MaxTokens: in.MaxTokens, Temperature: in.Temperature,
		TopP: in.TopP, Stop: in.StopSequences, Stream: in.Stream}
	noteKeys(req, keys, msgKnown)
	d := msgDecoder{req: req}
	system, err := d.content(in.System, in.systemList, "system")
	if err != nil {
		return nil, err
	}
	req.System = system
	for i, m := range in.Messages {
		param := "" // named only where it could be needed: a list the fast reader did not read
		if m.list == nil && contentNamed(m.Content) {
			param = "messages." + strconv.Itoa(i) + ".content"
		}
		parts, err := d.content(m.Content, m.list, param)
		if err != nil {
			return nil, err
		}
		req.Messages = appendTurn(req.Messages, m.Role, parts)
	}
	d.tools(in.Tools, in.ToolChoice)
	d.options(&in)
	if d.cache {
		dropFor(req, "cache_control")
	}
	return req, nil
}

// msgDecoder collects what a Messages request carries beyond its parts.
type msgDecoder struct {
	req   *Request
	cache bool // a cache_control was seen
}

// options decodes metadata, thinking and output_config.
func (d *msgDecoder) options(in *msgRequest) {
	if in.Metadata != nil {
		d.req.User = in.Metadata.UserID
	}
	effort := ""
	if oc := in.OutputConfig; oc != nil {
		effort = normalEffort(oc.Effort)
		if f := oc.Format; f != nil && f.Type == "json_schema" {
			d.req.Format = &Format{Schema: f.Schema, Strict: true}
		}
	}
	if t := in.Thinking; t != nil {
		switch t.Type {
		case "enabled":
			d.req.Thinking = &Thinking{Budget: t.BudgetTokens, Effort: effort}
		case "adaptive":
			d.req.Thinking = &Thinking{Effort: cmp.Or(effort, "medium")}
		}
	}
}

// tools decodes tools and tool_choice; server tools are dropped, or
// skipped when the request requires them.
func (d *msgDecoder) tools(tools []msgTool, choice *msgToolChoice) {
	builtin := map[string]bool{}
	for _, t := range tools {
		if t.CacheControl != nil {
			d.cache = true
		}
		if t.Type != "" && t.Type != "custom" {
			builtin[t.Name] = true
			d.req.Builtins = append(d.req.Builtins, t.Type)
			dropFor(d.req, t.Type)
			continue
		}
		d.req.Tools = append(d.req.Tools, Tool{Name: t.Name, Description: t.Description, Schema: t.InputSchema})
	}
	if choice == nil {
		return
	}
	d.req.ToolChoice, d.req.ToolName = choice.Type, choice.Name
	if choice.DisableParallelToolUse {
		d.req.Parallel = new(bool)
	}
	if choice.Type == "tool" && builtin[choice.Name] || choice.Type == "any" && len(d.req.Tools) == 0 && len(builtin) > 0 {
		skipFor(d.req, "tool_choice")
	}
}

// content decodes a string or a list of blocks into parts: list, when
// the fast reader has read raw's blocks already, or raw.
func (d *msgDecoder) content(raw json.RawMessage, list *msgList, param string) ([]Part, error) {
	var blocks []msgBlock
	var raws []json.RawMessage
	if list != nil {
		blocks, raws = list.blocks, list.raws
	} else {
		var text []Part
		var err error
		text, blocks, raws, err = contentList(raw, d.req.lits, param, readMsgBlocks)
		if blocks == nil {
			return text, err
		}
	}
	parts := make([]Part, 0, len(blocks))
	for i, b := range blocks {
		if b.CacheControl != nil {
			d.cache = true
		}
		if b.Type == "thinking" || b.Type == "redacted_thinking" {
			if raws == nil {
				raws = rawElements(raw)
			}
			parts = append(parts, thinkingPart(b, raws[i]))
			continue
		}
		parts = d.block(parts, b)
	}
	return parts, nil
}

// rawElements is the bytes of each element of raw, a JSON list.
func rawElements(raw json.RawMessage) []json.RawMessage {
	var raws []json.RawMessage // its own variable: content's stays on the stack
	_ = json.Unmarshal(raw, &raws)
	return raws
}

// thinkingPart keeps a thinking or redacted_thinking block byte-identical.
func thinkingPart(b msgBlock, raw json.RawMessage) Part {
	var text struct {
		Thinking string `json:"thinking"`
	}
	_ = json.Unmarshal(raw, &text)
	return Part{Kind: ThinkingBlock, Text: text.Thinking, Raw: raw, Signature: b.Signature}
}

// block appends the parts of one block.
func (d *msgDecoder) block(parts []Part, b msgBlock) []Part {
	switch b.Type {
	case "text":
		return append(parts, Part{Kind: Text, Text: b.Text})
	case "image", "document":
		return d.media(parts, b)
	case "tool_use":
		return append(parts, Part{Kind: ToolCall, CallID: b.ID, Name: b.Name, Input: argumentsObject(b.Input)})
	case "tool_result":
		content, _ := d.content(b.Content, b.list, "tool_result.content")
		return append(parts, Part{Kind: ToolResult, CallID: b.ToolUseID, Content: content, IsError: b.IsError})
	case "search_result":
		content, _ := d.content(b.Content, b.list, "search_result.content")
		head := b.Title
		if src := b.Source; src != nil && src.Type == sourceString && src.URL != "" {
			head += "\n" + src.URL
		}
		return append(parts, Part{Kind: Text, Text: strings.TrimSpace(head + "\n" + joinText(content))})
	}
	if b.Type == "server_tool_use" || b.Type == "mcp_tool_use" || strings.HasSuffix(b.Type, "_tool_result") {
		raw, _ := json.Marshal(b)
		return append(parts, builtinText(strings.TrimSpace(b.Type+" "+b.Name), raw))
	}
	dropFor(d.req, "content."+b.Type)
	return parts
}

// media appends an image or a document.
func (d *msgDecoder) media(parts []Part, b msgBlock) []Part {
	kind := Image
	if b.Type == "document" {
		kind = File
	}
	src := b.Source
	if src == nil {
		return parts
	}
	switch src.Type {
	case "base64":
		return append(parts, Part{Kind: kind, MediaType: src.MediaType, Data: src.Data, FileName: b.Title})
	case "url":
		return append(parts, Part{Kind: kind, URL: src.URL, FileName: b.Title})
	case "text":
		return append(parts, Part{Kind: Text, Text: src.Data})
	case "content":
		content, _ := d.content(src.Content, nil, "document.source.content")
		return append(parts, content...)
	case sourceString:
		skipFor(d.req, "source") // a string source is a search result's
		return parts
	}
	skipFor(d.req, "file_id")
	return parts
}

// appendTurn appends parts as a turn of role, merged into the last turn
// when it has the same role (consecutive turns of one role are one turn,
// as Messages reads them).
func appendTurn(msgs []Message, role string, parts []Part) []Message {
	if n := len(msgs); n > 0 && msgs[n-1].Role == role && role != "system" {
		msgs[n-1].Parts = append(msgs[n-1].Parts, parts...)
		return msgs
	}
	return append(msgs, Message{Role: role, Parts: parts})
}
