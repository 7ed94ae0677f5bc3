package wire

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
)

// The Responses request decoder (the encoder is in
// request_responses_encode.go).

type respRequest struct {
	Model              string          `json:"model"`
	Input              json.RawMessage `json:"input"`
	Instructions       string          `json:"instructions"`
	Tools              []respTool      `json:"tools"`
	ToolChoice         json.RawMessage `json:"tool_choice"`
	ParallelToolCalls  *bool           `json:"parallel_tool_calls"`
	MaxOutputTokens    int             `json:"max_output_tokens"`
	Temperature        *float64        `json:"temperature"`
	TopP               *float64        `json:"top_p"`
	Stream             bool            `json:"stream"`
	User               string          `json:"user"`
	SafetyIdentifier   string          `json:"safety_identifier"`
	Reasoning          *respReasoning  `json:"reasoning"`
	Text               *respText       `json:"text"`
	PreviousResponseID string          `json:"previous_response_id"`
	Prompt             json.RawMessage `json:"prompt"`
	Conversation       json.RawMessage `json:"conversation"`
	Background         bool            `json:"background"`
	TopLogprobs        int             `json:"top_logprobs"`
	Store              bool            `json:"store"`

	items    []respItem        // Input's items, when the fast reader read them
	itemRaws []json.RawMessage // and each item's bytes
}

type respReasoning struct {
	Effort string `json:"effort,omitempty"`
}

type respText struct {
	Format *respFormat `json:"format,omitempty"`
}

type respFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name,omitempty"`
	Schema json.RawMessage `json:"schema,omitempty"`
	Strict *bool           `json:"strict,omitempty"`
}

type respTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Tools       []respTool      `json:"tools"`
}

// respItem is an input item, decoded.
type respItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	Output    json.RawMessage `json:"output"`
	content   []respPart      // Content's parts, when the fast reader read them
	output    []respPart      // Output's parts, likewise
}

// respPart is a content part of an item, decoded and encoded.
type respPart struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Refusal  string `json:"refusal,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	FileData string `json:"file_data,omitempty"`
	FileURL  string `json:"file_url,omitempty"`
	Filename string `json:"filename,omitempty"`
	lit      []byte // Text's literal, encoded (literals.go)
}

var respKnown = map[string]bool{
	"model": true, "input": true, "instructions": true, "tools": true, "tool_choice": true,
	"parallel_tool_calls": true, "max_output_tokens": true, "temperature": true, "top_p": true,
	"stream": true, "stream_options": true, "metadata": true, "user": true, "safety_identifier": true,
	"reasoning": true, "text": true, "include": true, "truncation": true, "store": true,
	"previous_response_id": true, "prompt": true, "conversation": true, "background": true,
	"top_logprobs": true,
}

// decodeResponses decodes a Responses request.
func decodeResponses(body []byte) (*Request, error) {
	var in respRequest
	lits := literals{}
	keys, err := readRequestObject(body, &in, lits, readRespRequest)
	if err != nil {
		return nil, err
	}
	req := &Request{lits: lits, Model: in.Model, MaxTokens: in.MaxOutputTokens, Temperature: in.Temperature,
		TopP: in.TopP, Stream: in.Stream, User: cmp.Or(in.User, in.SafetyIdentifier), Parallel: in.ParallelToolCalls}
	respSkips(req, &in)
	noteKeys(req, keys, respKnown)
	if in.Reasoning != nil {
		if effort := normalEffort(in.Reasoning.Effort); effort != "" {
			req.Thinking = &Thinking{Effort: effort}
		}
	}
	if in.Text != nil && in.Text.Format != nil {
		switch f := in.Text.Format; f.Type {
		case "json_schema":
			req.Format = &Format{Name: f.Name, Schema: f.Schema, Strict: f.Strict != nil && *f.Strict}
		case "json_object":
			skipFor(req, "text.format")
		}
	}
	if in.Instructions != "" {
		req.System = []Part{{Kind: Text, Text: in.Instructions}}
	}
	if err := respInput(req, &in); err != nil {
		return nil, err
	}
	builtin := respTools(req, in.Tools, "")
	return req, respToolChoice(req, in.ToolChoice, builtin)
}

// respSkips notes what no other wire can express, and store: true.
func respSkips(req *Request, in *respRequest) {
	if in.PreviousResponseID != "" {
		skipFor(req, "previous_response_id")
	}
	if present(in.Prompt) {
		skipFor(req, "prompt")
	}
	if present(in.Conversation) {
		skipFor(req, "conversation")
	}
	if in.Background {
		skipFor(req, "background")
	}
	if in.TopLogprobs > 0 {
		skipFor(req, "top_logprobs")
	}
	if in.Store {
		dropFor(req, "store")
	}
}

// present reports whether a raw field holds something other than null.
func present(raw json.RawMessage) bool {
	return isSetJSON(bytes.TrimSpace(raw))
}

// respInput decodes input: a string, or a list of items (in.items, when
// the fast reader read them).
func respInput(req *Request, in *respRequest) error {
	if in.items == nil {
		return respInputRaw(req, in.Input)
	}
	return respItemsIn(req, in.items, in.itemRaws)
}

// respItemsIn decodes a list of input items, raws each item's bytes.
func respItemsIn(req *Request, items []respItem, raws []json.RawMessage) error {
	for i, item := range items {
		if err := respItemIn(req, item, raws[i]); err != nil {
			return err
		}
	}
	return nil
}

// respInputRaw is respInput on input's bytes.
func respInputRaw(req *Request, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if !present(raw) {
		return nil
	}
	if raw[0] == '"' {
		req.Messages = []Message{{Role: "user", Parts: []Part{{Kind: Text, Text: req.lits.decode(raw)}}}}
		return nil
	}
	if items, raws, ok := readRespItems(raw); ok {
		return respItemsIn(req, items, raws)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		return &RequestError{Param: "input", Message: "input must be a string or a list of items"}
	}
	for i, r := range raws {
		var item respItem
		if err := json.Unmarshal(r, &item); err != nil {
			return &RequestError{Param: "input." + strconv.Itoa(i), Message: "invalid input item: " + err.Error()}
		}
		if err := respItemIn(req, item, r); err != nil {
			return err
		}
	}
	return nil
}

// respItemIn decodes one input item into the turns.
func respItemIn(req *Request, item respItem, raw json.RawMessage) error {
	switch item.Type {
	case "", "message":
		return respMessage(req, item)
	case "function_call":
		p := Part{Kind: ToolCall, CallID: item.CallID, Name: item.Name, Namespace: item.Namespace,
			Input: argumentsObject([]byte(item.Arguments))}
		req.Messages = appendTurn(req.Messages, "assistant", []Part{p})
	case "custom_tool_call":
		p := Part{Kind: ToolCall, CallID: item.CallID, Name: item.Name, Custom: true, Text: item.Input}
		req.Messages = appendTurn(req.Messages, "assistant", []Part{p})
	case "function_call_output", "custom_tool_call_output":
		content, err := respContent(req, item.Output, item.output, "output")
		if err != nil {
			return err
		}
		p := errorResult(Part{Kind: ToolResult, CallID: item.CallID, Content: content})
		req.Messages = appendTurn(req.Messages, "user", []Part{p})
	case "reasoning":
		req.Messages = appendTurn(req.Messages, "assistant", []Part{{Kind: Reasoning, Raw: raw}})
	case "item_reference":
		skipFor(req, "item_reference")
	default:
		if !respBuiltinItems[item.Type] {
			dropFor(req, "input."+item.Type)
			return nil
		}
		req.Messages = appendTurn(req.Messages, "assistant", []Part{builtinText(item.Type, raw)})
	}
	return nil
}

// respBuiltinItems are the history items of built-in tools, sent to other
// wires as text.
var respBuiltinItems = map[string]bool{
	"web_search_call": true, "file_search_call": true, "code_interpreter_call": true,
	"computer_call": true, "computer_call_output": true, "image_generation_call": true,
	"local_shell_call": true, "local_shell_call_output": true, "mcp_call": true,
	"mcp_list_tools": true, "mcp_approval_request": true, "mcp_approval_response": true,
	"shell_call": true, "shell_call_output": true, "apply_patch_call": true, "apply_patch_call_output": true,
}

// respMessage decodes a message item: leading system/developer items join
// the system prompt.
func respMessage(req *Request, item respItem) error {
	parts, err := respContent(req, item.Content, item.content, "content")
	if err != nil {
		return err
	}
	switch item.Role {
	case "system", "developer":
		if len(req.Messages) == 0 {
			req.System = append(req.System, parts...)
			return nil
		}
		req.Messages = appendTurn(req.Messages, "system", parts)
	case "assistant":
		req.Messages = appendTurn(req.Messages, "assistant", parts)
	default:
		req.Messages = appendTurn(req.Messages, "user", parts)
	}
	return nil
}

// respContent decodes content or output: a string or a list of parts
// (list, when the fast reader read them).
func respContent(req *Request, raw json.RawMessage, list []respPart, param string) ([]Part, error) {
	return contentParts(req, raw, list, param, readRespParts, respPartIn)
}

// respPartIn appends one content part.
func respPartIn(req *Request, parts []Part, c respPart) []Part {
	switch c.Type {
	case "input_text", "output_text", "text", "summary_text", "reasoning_text":
		return append(parts, Part{Kind: Text, Text: c.Text})
	case "refusal":
		return append(parts, Part{Kind: Text, Text: c.Refusal})
	}
	if c.FileID != "" {
		skipFor(req, "file_id")
		return parts
	}
	switch c.Type {
	case "input_image":
		return append(parts, mediaPart(Image, c.ImageURL, ""))
	case "input_file":
		if c.FileURL != "" {
			return append(parts, Part{Kind: File, URL: c.FileURL, FileName: c.Filename})
		}
		p := mediaPart(File, c.FileData, c.Filename)
		if p.URL != "" { // bare base64
			p.URL, p.MediaType, p.Data = "", "application/pdf", c.FileData
		}
		return append(parts, p)
	}
	skipFor(req, "content."+c.Type) // input_audio and what else no other wire reads
	return parts
}

// respTools decodes function, custom and namespace tools; built-in tools
// are dropped and returned by type.
func respTools(req *Request, tools []respTool, namespace string) map[string]bool {
	builtin := map[string]bool{}
	for _, t := range tools {
		switch t.Type {
		case "function":
			req.Tools = append(req.Tools, Tool{Name: t.Name, Description: t.Description,
				Schema: t.Parameters, Namespace: namespace})
		case "custom":
			req.Tools = append(req.Tools, Tool{Name: t.Name, Description: t.Description,
				Custom: true, Namespace: namespace})
		case "namespace":
			respTools(req, t.Tools, t.Name)
		default:
			builtin[t.Type] = true
			req.Builtins = append(req.Builtins, t.Type)
			dropFor(req, t.Type)
		}
	}
	return builtin
}

// respToolChoice decodes tool_choice; requiring a built-in tool skips.
func respToolChoice(req *Request, raw json.RawMessage, builtin map[string]bool) error {
	if !present(raw) {
		return nil
	}
	var mode string
	var named struct {
		Type string `json:"type"`
		Name string `json:"name"`
		Mode string `json:"mode"`
	}
	switch {
	case json.Unmarshal(raw, &mode) == nil:
	case json.Unmarshal(raw, &named) == nil:
		mode = named.Mode
		if named.Type == "function" || named.Type == "custom" {
			req.ToolChoice, req.ToolName = "tool", named.Name
			return nil
		}
		if named.Type != "allowed_tools" {
			skipFor(req, "tool_choice") // a built-in tool, required
			return nil
		}
	default:
		return &RequestError{Param: "tool_choice", Message: "invalid tool_choice"}
	}
	req.ToolChoice = mode
	if mode == "required" {
		req.ToolChoice = "any"
		if len(req.Tools) == 0 && len(builtin) > 0 {
			skipFor(req, "tool_choice")
		}
	}
	return nil
}
