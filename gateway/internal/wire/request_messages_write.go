package wire

import (
	"encoding/json"
	"strconv"
)

// Writing a Messages request (msgOut) as json.Marshal would.

func appendMsgOut(dst []byte, out *msgOut) []byte {
	dst = append(dst, `{"model":`...)
	dst = appendString(dst, out.Model)
	dst = strconv.AppendInt(appendKey(dst, "max_tokens"), int64(out.MaxTokens), 10)
	if len(out.System) > 0 {
		dst = appendMsgBlocks(appendKey(dst, "system"), out.System)
	}
	dst = appendListOrNull(appendKey(dst, "messages"), out.Messages, appendMsgMessage)
	if len(out.Tools) > 0 {
		dst = appendList(appendKey(dst, "tools"), out.Tools, appendMsgTool)
	}
	if c := out.ToolChoice; c != nil {
		dst = appendTypeObject(appendKey(dst, "tool_choice"), c.Type)
		dst = appendStringOpt(dst, "name", c.Name)
		dst = append(appendTrueOpt(dst, "disable_parallel_tool_use", c.DisableParallelToolUse), '}')
	}
	dst = appendFloatOpt(dst, "temperature", out.Temperature)
	dst = appendFloatOpt(dst, "top_p", out.TopP)
	dst = appendStringsOpt(dst, "stop_sequences", out.StopSequences)
	dst = appendTrueOpt(dst, "stream", out.Stream)
	if out.Metadata != nil {
		dst = appendOneFieldObject(dst, "metadata", "user_id", out.Metadata.UserID)
	}
	if t := out.Thinking; t != nil {
		dst = appendTypeObject(appendKey(dst, "thinking"), t.Type)
		dst = append(appendIntOpt(dst, "budget_tokens", t.BudgetTokens), '}')
	}
	if oc := out.OutputConfig; oc != nil {
		dst = appendMsgOutputConfig(appendKey(dst, "output_config"), oc)
	}
	return append(dst, '}')
}

func appendMsgMessage(dst []byte, m *msgOutMessage) []byte {
	dst = append(dst, `{"role":`...)
	dst = appendString(dst, m.Role)
	dst = appendKey(dst, "content")
	switch content := m.Content.(type) {
	case []msgBlock:
		dst = appendMsgBlocks(dst, content)
	case []any:
		dst = appendList(dst, content, appendMsgMixed)
	}
	return append(dst, '}')
}

func appendMsgOutputConfig(dst []byte, oc *msgOutputConfig) []byte {
	dst = append(dst, '{')
	n := len(dst)
	if f := oc.Format; f != nil {
		dst = appendTypeObject(append(dst, `"format":`...), f.Type)
		dst = append(appendRawOpt(dst, "schema", f.Schema), '}')
	}
	if oc.Effort != "" {
		if len(dst) > n {
			dst = append(dst, ',')
		}
		dst = appendString(append(dst, `"effort":`...), oc.Effort)
	}
	return append(dst, '}')
}

func appendMsgTool(dst []byte, t *msgTool) []byte {
	if t.Type != "" {
		dst = appendTypeObject(dst, t.Type)
		dst = appendStringField(dst, "name", t.Name)
	} else {
		dst = appendString(append(dst, `{"name":`...), t.Name)
	}
	dst = appendTextOpt(dst, "description", t.Description, t.lit)
	dst = appendRawOpt(dst, "input_schema", t.InputSchema)
	return append(appendRawOpt(dst, "cache_control", t.CacheControl), '}')
}

// appendMsgMixed writes an element of content of blocks and thinking
// blocks kept raw.
func appendMsgMixed(dst []byte, c *any) []byte {
	switch c := (*c).(type) {
	case json.RawMessage:
		dst = appendRaw(dst, c)
	case msgBlock:
		dst = appendMsgBlock(dst, &c)
	}
	return dst
}

func appendMsgBlocks(dst []byte, blocks []msgBlock) []byte {
	return appendList(dst, blocks, appendMsgBlock)
}

func appendMsgBlock(dst []byte, b *msgBlock) []byte {
	dst = appendTypeObject(dst, b.Type)
	dst = appendTextOpt(dst, "text", b.Text, b.lit)
	if s := b.Source; s != nil {
		dst = appendTypeObject(appendKey(dst, "source"), s.Type)
		dst = appendStringOpt(dst, "media_type", s.MediaType)
		dst = appendStringOpt(dst, "data", s.Data)
		dst = appendStringOpt(dst, "url", s.URL)
		dst = appendStringOpt(dst, "file_id", s.FileID)
		dst = append(appendRawOpt(dst, "content", s.Content), '}')
	}
	dst = appendStringOpt(dst, "title", b.Title)
	dst = appendStringOpt(dst, "id", b.ID)
	dst = appendStringOpt(dst, "name", b.Name)
	dst = appendRawOpt(dst, "input", b.Input)
	dst = appendStringOpt(dst, "tool_use_id", b.ToolUseID)
	dst = appendRawOpt(dst, "content", b.Content)
	dst = appendTrueOpt(dst, "is_error", b.IsError)
	dst = appendStringOpt(dst, "signature", b.Signature)
	return append(appendRawOpt(dst, "cache_control", b.CacheControl), '}')
}
