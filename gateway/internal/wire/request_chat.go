package wire

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"
)

// The chat completions request decoder (the encoder is in
// request_chat_encode.go).

type chatRequest struct {
	Model               string              `json:"model"`
	Messages            []chatMessage       `json:"messages"`
	Tools               []chatTool          `json:"tools"`
	ToolChoice          json.RawMessage     `json:"tool_choice"`
	ParallelToolCalls   *bool               `json:"parallel_tool_calls"`
	MaxTokens           int                 `json:"max_tokens"`
	MaxCompletionTokens int                 `json:"max_completion_tokens"`
	Temperature         *float64            `json:"temperature"`
	TopP                *float64            `json:"top_p"`
	Stop                json.RawMessage     `json:"stop"`
	Stream              bool                `json:"stream"`
	StreamOptions       *chatStreamOptions  `json:"stream_options"`
	User                string              `json:"user"`
	SafetyIdentifier    string              `json:"safety_identifier"`
	ReasoningEffort     string              `json:"reasoning_effort"`
	ResponseFormat      *chatResponseFormat `json:"response_format"`
	N                   int                 `json:"n"`
	Logprobs            bool                `json:"logprobs"`
	TopLogprobs         *int                `json:"top_logprobs"`
	Modalities          []string            `json:"modalities"`
	Audio               json.RawMessage     `json:"audio"`
	Store               bool                `json:"store"`
}

type chatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *chatJSONSchema `json:"json_schema,omitempty"`
}

type chatJSONSchema struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict bool            `json:"strict,omitempty"`
}

type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []chatCallIn    `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	Refusal    string          `json:"refusal"`
	parts      []chatPart      // Content's parts, when the fast reader read them
}

type chatCallIn struct {
	ID       string        `json:"id"`
	Type     string        `json:"type"`
	Function *chatFunction `json:"function,omitempty"`
	Custom   *chatCustom   `json:"custom,omitempty"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Arguments   *string         `json:"arguments,omitempty"`
	lit         []byte          // Description's literal, encoded (literals.go)
}

type chatCustom struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Input       string `json:"input"`
}

type chatTool struct {
	Type     string        `json:"type"`
	Function *chatFunction `json:"function,omitempty"`
	Custom   *chatCustom   `json:"custom,omitempty"`
}

// chatPart is a content part, decoded and encoded.
type chatPart struct {
	Type       string          `json:"type"`
	Text       string          `json:"text,omitempty"`
	Refusal    string          `json:"refusal,omitempty"`
	ImageURL   *chatImageURL   `json:"image_url,omitempty"`
	File       *chatFile       `json:"file,omitempty"`
	InputAudio json.RawMessage `json:"input_audio,omitempty"`
	lit        []byte          // Text's literal, encoded (literals.go)
}

type chatImageURL struct {
	URL string `json:"url"`
}

type chatFile struct {
	FileData string `json:"file_data,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	Filename string `json:"filename,omitempty"`
}

var chatKnown = map[string]bool{
	"model": true, "messages": true, "tools": true, "tool_choice": true, "parallel_tool_calls": true,
	"max_tokens": true, "max_completion_tokens": true, "temperature": true, "top_p": true,
	"stop": true, "stream": true, "stream_options": true, "metadata": true, "user": true,
	"safety_identifier": true, "reasoning_effort": true, "response_format": true, "n": true,
	"logprobs": true, "top_logprobs": true, "modalities": true, "audio": true, "store": true,
}

// decodeChat decodes a chat completions request.
func decodeChat(body []byte) (*Request, error) {
	var in chatRequest
	lits := literals{}
	keys, err := readRequestObject(body, &in, lits, readChatRequest)
	if err != nil {
		return nil, err
	}
	req := &Request{lits: lits, Model: in.Model, MaxTokens: cmp.Or(in.MaxCompletionTokens, in.MaxTokens),
		Temperature: in.Temperature, TopP: in.TopP, Stream: in.Stream,
		User: cmp.Or(in.User, in.SafetyIdentifier), Parallel: in.ParallelToolCalls}
	req.StreamUsage = in.Stream && in.StreamOptions != nil && in.StreamOptions.IncludeUsage
	if effort := normalEffort(in.ReasoningEffort); effort != "" {
		req.Thinking = &Thinking{Effort: effort}
	}
	chatSkips(req, &in)
	noteKeys(req, keys, chatKnown)
	stop, err := stopList(in.Stop)
	if err != nil {
		return nil, err
	}
	req.Stop = stop
	if rf := in.ResponseFormat; rf != nil {
		switch {
		case rf.Type == "json_object":
			skipFor(req, "response_format")
		case rf.Type == "json_schema" && rf.JSONSchema != nil:
			req.Format = &Format{Name: rf.JSONSchema.Name, Schema: rf.JSONSchema.Schema, Strict: rf.JSONSchema.Strict}
		}
	}
	for i, m := range in.Messages {
		if err := chatTurn(req, m, i); err != nil {
			return nil, err
		}
	}
	chatTools(req, in.Tools)
	return req, chatToolChoice(req, in.ToolChoice)
}

// chatSkips notes what no other wire can express, and named drops.
func chatSkips(req *Request, in *chatRequest) {
	if in.N > 1 {
		skipFor(req, "n")
	}
	if in.Logprobs {
		skipFor(req, "logprobs")
	}
	if in.TopLogprobs != nil && *in.TopLogprobs > 0 {
		skipFor(req, "top_logprobs")
	}
	for _, m := range in.Modalities {
		if m == "audio" {
			skipFor(req, "modalities")
		}
	}
	if present(in.Audio) {
		skipFor(req, "audio")
	}
	if in.Store {
		dropFor(req, "store")
	}
}

// stopList decodes stop: a string or a list of strings.
func stopList(raw json.RawMessage) ([]string, error) {
	raw = bytes.TrimSpace(raw)
	if !isSetJSON(raw) {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, &RequestError{Param: "stop", Message: "stop must be a string or a list of strings"}
	}
	return list, nil
}

// chatTurn decodes message i: leading system/developer messages are the
// system prompt; a tool message is a tool result in a user turn.
func chatTurn(req *Request, m chatMessage, i int) error {
	param := "" // named only where it could be needed: a list the fast reader did not read
	if m.parts == nil && contentNamed(m.Content) {
		param = "messages." + strconv.Itoa(i) + ".content"
	}
	parts, err := chatContent(req, m.Content, m.parts, param)
	if err != nil {
		return err
	}
	switch m.Role {
	case "system", "developer":
		if len(req.Messages) == 0 {
			req.System = append(req.System, parts...)
			return nil
		}
		req.Messages = appendTurn(req.Messages, "system", parts)
	case "tool":
		result := errorResult(Part{Kind: ToolResult, CallID: m.ToolCallID, Content: parts})
		req.Messages = appendTurn(req.Messages, "user", []Part{result})
	case "assistant":
		if m.Refusal != "" {
			parts = append(parts, Part{Kind: Text, Text: m.Refusal})
		}
		for _, c := range m.ToolCalls {
			parts = append(parts, chatCall(c))
		}
		req.Messages = appendTurn(req.Messages, "assistant", parts)
	default:
		req.Messages = appendTurn(req.Messages, "user", parts)
	}
	return nil
}

// chatCall decodes an assistant's tool call.
func chatCall(c chatCallIn) Part {
	if c.Custom != nil {
		return Part{Kind: ToolCall, CallID: c.ID, Name: c.Custom.Name, Custom: true, Text: c.Custom.Input}
	}
	p := Part{Kind: ToolCall, CallID: c.ID, Input: emptyObject}
	if f := c.Function; f != nil {
		p.Name = f.Name
		if f.Arguments != nil {
			p.Input = argumentsObject([]byte(*f.Arguments))
		}
	}
	return p
}

// errorResult reads a result whose text starts "Error: " as an error.
func errorResult(p Part) Part {
	if len(p.Content) > 0 && p.Content[0].Kind == Text {
		if rest, ok := strings.CutPrefix(p.Content[0].Text, "Error: "); ok {
			p.IsError = true
			p.Content[0].Text = rest
		}
	}
	return p
}

// chatContent decodes content: a string, null, or a list of parts (list,
// when the fast reader read them).
func chatContent(req *Request, raw json.RawMessage, list []chatPart, param string) ([]Part, error) {
	return contentParts(req, raw, list, param, readChatParts, chatPartIn)
}

// chatPartIn appends one content part.
func chatPartIn(req *Request, parts []Part, c chatPart) []Part {
	switch c.Type {
	case "text":
		return append(parts, Part{Kind: Text, Text: c.Text})
	case "refusal":
		return append(parts, Part{Kind: Text, Text: c.Refusal})
	case "image_url":
		if c.ImageURL != nil {
			return append(parts, mediaPart(Image, c.ImageURL.URL, ""))
		}
	case "file":
		if c.File == nil {
			return parts
		}
		if c.File.FileID != "" {
			skipFor(req, "file_id")
			return parts
		}
		p := mediaPart(File, c.File.FileData, c.File.Filename)
		if p.URL != "" { // bare base64
			p.URL, p.MediaType, p.Data = "", "application/pdf", c.File.FileData
		}
		return append(parts, p)
	case "input_audio":
		skipFor(req, "input_audio")
	default:
		dropFor(req, "content."+c.Type)
	}
	return parts
}

// mediaPart is an image or file from a URL: a data: URL is decoded.
func mediaPart(kind PartKind, url, name string) Part {
	if mediaType, data, ok := parseDataURL(url); ok {
		return Part{Kind: kind, MediaType: mediaType, Data: data, FileName: name}
	}
	return Part{Kind: kind, URL: url, FileName: name}
}

// chatTools decodes function and custom tools.
func chatTools(req *Request, tools []chatTool) {
	for _, t := range tools {
		switch {
		case t.Function != nil:
			f := t.Function
			req.Tools = append(req.Tools, Tool{Name: f.Name, Description: f.Description, Schema: f.Parameters})
		case t.Custom != nil:
			req.Tools = append(req.Tools, Tool{Name: t.Custom.Name, Description: t.Custom.Description, Custom: true})
		default:
			dropFor(req, t.Type)
		}
	}
}

// chatToolChoice decodes tool_choice: a mode or a named tool.
func chatToolChoice(req *Request, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if !isSetJSON(raw) {
		return nil
	}
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		if mode == "required" {
			mode = "any"
		}
		req.ToolChoice = mode
		return nil
	}
	var named struct {
		Type     string      `json:"type"`
		Function *chatCustom `json:"function"`
		Custom   *chatCustom `json:"custom"`
		Mode     string      `json:"mode"`
	}
	if err := json.Unmarshal(raw, &named); err != nil {
		return &RequestError{Param: "tool_choice", Message: "invalid tool_choice"}
	}
	switch {
	case named.Function != nil:
		req.ToolChoice, req.ToolName = "tool", named.Function.Name
	case named.Custom != nil:
		req.ToolChoice, req.ToolName = "tool", named.Custom.Name
	case named.Mode == "required":
		req.ToolChoice = "any"
	default:
		req.ToolChoice = "auto"
	}
	return nil
}
