package wire

// Writing a chat completions request (chatOut) as json.Marshal would.

func appendChatOut(dst []byte, out *chatOut) []byte {
	dst = append(dst, `{"model":`...)
	dst = appendString(dst, out.Model)
	dst = appendListOrNull(appendKey(dst, "messages"), out.Messages, appendChatMessage)
	if len(out.Tools) > 0 {
		dst = appendList(appendKey(dst, "tools"), out.Tools, appendChatTool)
	}
	switch c := out.ToolChoice.(type) {
	case string:
		dst = appendStringField(dst, "tool_choice", c)
	case chatNamedChoice:
		dst = appendTypeObject(appendKey(dst, "tool_choice"), c.Type)
		dst = appendString(append(appendKey(dst, "function"), `{"name":`...), c.Function.Name)
		dst = append(dst, '}', '}')
	}
	return appendChatOptions(dst, out)
}

// appendChatOptions writes the fields after tool_choice.
func appendChatOptions(dst []byte, out *chatOut) []byte {
	dst = appendBoolPtrOpt(dst, "parallel_tool_calls", out.ParallelToolCalls)
	dst = appendIntOpt(dst, "max_tokens", out.MaxTokens)
	dst = appendIntOpt(dst, "max_completion_tokens", out.MaxCompletionTokens)
	dst = appendFloatOpt(dst, "temperature", out.Temperature)
	dst = appendFloatOpt(dst, "top_p", out.TopP)
	dst = appendStringsOpt(dst, "stop", out.Stop)
	dst = appendTrueOpt(dst, "stream", out.Stream)
	if out.StreamOptions != nil {
		dst = append(appendKey(dst, "stream_options"), `{"include_usage":`...)
		if out.StreamOptions.IncludeUsage {
			dst = append(dst, "true}"...)
		} else {
			dst = append(dst, "false}"...)
		}
	}
	dst = appendStringOpt(dst, "user", out.User)
	dst = appendStringOpt(dst, "reasoning_effort", out.ReasoningEffort)
	if rf := out.ResponseFormat; rf != nil {
		dst = appendTypeObject(appendKey(dst, "response_format"), rf.Type)
		if s := rf.JSONSchema; s != nil {
			dst = appendString(append(appendKey(dst, "json_schema"), `{"name":`...), s.Name)
			dst = appendRawOpt(dst, "schema", s.Schema)
			dst = append(appendTrueOpt(dst, "strict", s.Strict), '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

func appendChatFunction(dst []byte, f *chatFunction) []byte {
	dst = appendString(append(dst, `{"name":`...), f.Name)
	dst = appendTextOpt(dst, "description", f.Description, f.lit)
	dst = appendRawOpt(dst, "parameters", f.Parameters)
	if f.Arguments != nil {
		dst = appendStringField(dst, "arguments", *f.Arguments)
	}
	return append(dst, '}')
}

func appendChatTool(dst []byte, t *chatTool) []byte {
	dst = appendTypeObject(dst, t.Type)
	if f := t.Function; f != nil {
		dst = appendChatFunction(appendKey(dst, "function"), f)
	}
	return append(dst, '}')
}

func appendChatMessage(dst []byte, m *chatOutMessage) []byte {
	dst = appendString(append(dst, `{"role":`...), m.Role)
	dst = appendKey(dst, "content")
	switch c := m.Content.(type) {
	case nil:
		dst = append(dst, "null"...)
	case string:
		dst = appendText(dst, c, m.lit)
	case []chatPart:
		dst = appendList(dst, c, appendChatPart)
	}
	if len(m.ToolCalls) > 0 {
		dst = appendList(appendKey(dst, "tool_calls"), m.ToolCalls, appendChatCall)
	}
	return append(appendStringOpt(dst, "tool_call_id", m.ToolCallID), '}')
}

func appendChatCall(dst []byte, c *chatCallIn) []byte {
	dst = appendString(append(dst, `{"id":`...), c.ID)
	dst = appendStringField(dst, "type", c.Type)
	if c.Function != nil {
		dst = appendChatFunction(appendKey(dst, "function"), c.Function)
	}
	return append(dst, '}')
}

func appendChatPart(dst []byte, p *chatPart) []byte {
	dst = appendTypeObject(dst, p.Type)
	dst = appendTextOpt(dst, "text", p.Text, p.lit)
	dst = appendStringOpt(dst, "refusal", p.Refusal)
	if p.ImageURL != nil {
		dst = appendString(append(appendKey(dst, "image_url"), `{"url":`...), p.ImageURL.URL)
		dst = append(dst, '}')
	}
	if f := p.File; f != nil {
		dst = append(appendKey(dst, "file"), '{')
		n := len(dst)
		dst = appendStringOpt(dst, "file_data", f.FileData)
		dst = appendStringOpt(dst, "file_id", f.FileID)
		dst = appendStringOpt(dst, "filename", f.Filename)
		if len(dst) > n {
			dst = append(dst[:n], dst[n+1:]...) // the first field's comma
		}
		dst = append(dst, '}')
	}
	return append(appendRawOpt(dst, "input_audio", p.InputAudio), '}')
}
