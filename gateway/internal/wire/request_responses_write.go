package wire

import (
	"encoding/json"
	"strconv"
)

// Writing a Responses request (respOut) as json.Marshal would.

func appendRespOut(dst []byte, out *respOut) []byte {
	dst = append(dst, `{"model":`...)
	dst = appendString(dst, out.Model)
	dst = appendTextOpt(dst, "instructions", out.Instructions, out.instructionsLit)
	dst = appendListOrNull(appendKey(dst, "input"), out.Input, appendRespItem)
	if len(out.Tools) > 0 {
		dst = appendList(appendKey(dst, "tools"), out.Tools, appendRespTool)
	}
	switch c := out.ToolChoice.(type) {
	case string:
		dst = appendStringField(dst, "tool_choice", c)
	case respNamedChoice:
		dst = appendTypeObject(appendKey(dst, "tool_choice"), c.Type)
		dst = append(appendStringField(dst, "name", c.Name), '}')
	}
	return appendRespOptions(dst, out)
}

// appendRespOptions writes the fields after tool_choice.
func appendRespOptions(dst []byte, out *respOut) []byte {
	dst = appendBoolPtrOpt(dst, "parallel_tool_calls", out.ParallelToolCalls)
	dst = appendIntOpt(dst, "max_output_tokens", out.MaxOutputTokens)
	dst = appendFloatOpt(dst, "temperature", out.Temperature)
	dst = appendFloatOpt(dst, "top_p", out.TopP)
	dst = appendTrueOpt(dst, "stream", out.Stream)
	dst = appendStringOpt(dst, "user", out.User)
	if out.Reasoning != nil {
		dst = appendOneFieldObject(dst, "reasoning", "effort", out.Reasoning.Effort)
	}
	if out.Text != nil {
		dst = append(appendKey(dst, "text"), '{')
		if f := out.Text.Format; f != nil {
			dst = appendTypeObject(append(dst, `"format":`...), f.Type)
			dst = appendStringOpt(dst, "name", f.Name)
			dst = appendRawOpt(dst, "schema", f.Schema)
			dst = append(appendBoolPtrOpt(dst, "strict", f.Strict), '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func appendRespTool(dst []byte, t *respOutTool) []byte {
	dst = appendTypeObject(dst, t.Type)
	dst = appendStringField(dst, "name", t.Name)
	dst = appendTextOpt(dst, "description", t.Description, t.lit)
	dst = appendKey(dst, "parameters")
	if t.Parameters == nil {
		dst = append(dst, "null"...)
	} else {
		dst = appendRaw(dst, t.Parameters)
	}
	dst = strconv.AppendBool(appendKey(dst, "strict"), t.Strict)
	return append(dst, '}')
}

// appendRespItem writes an input item: kept raw, or built.
func appendRespItem(dst []byte, item *any) []byte {
	switch item := (*item).(type) {
	case json.RawMessage:
		dst = appendRaw(dst, item)
	case respOutItem:
		dst = appendRespOutItem(dst, &item)
	}
	return dst
}

func appendRespOutItem(dst []byte, item *respOutItem) []byte {
	dst = appendTypeObject(dst, item.Type)
	dst = appendStringOpt(dst, "role", item.Role)
	if item.Content != nil {
		dst = appendRespValue(appendKey(dst, "content"), item.Content, item.lit)
	}
	dst = appendStringOpt(dst, "call_id", item.CallID)
	dst = appendStringOpt(dst, "name", item.Name)
	dst = appendStringOpt(dst, "arguments", item.Arguments)
	if item.Output != nil {
		dst = appendRespValue(appendKey(dst, "output"), item.Output, item.lit)
	}
	return append(dst, '}')
}

// appendRespValue writes content or output: a string (lit its literal)
// or a list of parts.
func appendRespValue(dst []byte, v any, lit []byte) []byte {
	switch v := v.(type) {
	case string:
		return appendText(dst, v, lit)
	case []respPart:
		return appendListOrNull(dst, v, appendRespPart)
	}
	return append(dst, "null"...)
}

func appendRespPart(dst []byte, p *respPart) []byte {
	dst = appendTypeObject(dst, p.Type)
	dst = appendTextOpt(dst, "text", p.Text, p.lit)
	dst = appendStringOpt(dst, "refusal", p.Refusal)
	dst = appendStringOpt(dst, "image_url", p.ImageURL)
	dst = appendStringOpt(dst, "file_id", p.FileID)
	dst = appendStringOpt(dst, "file_data", p.FileData)
	dst = appendStringOpt(dst, "file_url", p.FileURL)
	return append(appendStringOpt(dst, "filename", p.Filename), '}')
}
