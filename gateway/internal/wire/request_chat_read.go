package wire

// The chat completions request read in one pass (request_reader.go): the
// same chatRequest and chatPart values encoding/json would decode, or
// false.

// readChatRequest reads body into in and returns its top-level keys.
func readChatRequest(body []byte, in *chatRequest) (keys []string, ok bool) {
	ok = read(body, func(r *jsonReader) {
		if r.peek() != '{' || !r.object() {
			r.fail()
			return
		}
		var seen keySet
		for r.next('}') {
			key := r.newKey(&seen)
			keys = append(keys, key)
			if !readChatField(r, key, in) && !readChatOption(r, key, in) {
				r.skip()
			}
		}
	})
	return keys, ok
}

func readChatField(r *jsonReader, key string, in *chatRequest) bool {
	switch key {
	case "model":
		return r.set(&in.Model)
	case "messages":
		in.Messages = readChatMessages(r)
	case "tools":
		if r.array() {
			in.Tools = make([]chatTool, 0, 16)
			for r.next(']') {
				var t chatTool
				if r.object() {
					readFields(r, func(key string) bool {
						return key == "type" && r.set(&t.Type) || readChatCallee(r, key, &t.Function, &t.Custom)
					})
				}
				in.Tools = append(in.Tools, t)
			}
		}
	case "tool_choice":
		return r.setRaw((*[]byte)(&in.ToolChoice))
	case "stop":
		return r.setRaw((*[]byte)(&in.Stop))
	case "audio":
		return r.setRaw((*[]byte)(&in.Audio))
	case "modalities":
		in.Modalities = r.strings()
	case "response_format":
		if r.object() {
			rf := &chatResponseFormat{}
			in.ResponseFormat = rf
			readFields(r, func(key string) bool {
				return key == "type" && r.set(&rf.Type) || key == "json_schema" && readChatJSONSchema(r, &rf.JSONSchema)
			})
		}
	default:
		return false
	}
	return true
}

// readChatOption reads the scalar fields.
func readChatOption(r *jsonReader, key string, in *chatRequest) bool {
	switch key {
	case "parallel_tool_calls":
		in.ParallelToolCalls = r.boolPtr()
	case "max_tokens":
		return r.setInt(&in.MaxTokens)
	case "max_completion_tokens":
		return r.setInt(&in.MaxCompletionTokens)
	case "temperature":
		in.Temperature = r.float()
	case "top_p":
		in.TopP = r.float()
	case "stream":
		in.Stream = r.boolean()
	case "stream_options":
		if r.object() {
			in.StreamOptions = &chatStreamOptions{}
			readFields(r, func(key string) bool {
				if key != "include_usage" {
					return false
				}
				in.StreamOptions.IncludeUsage = r.boolean()
				return true
			})
		}
	case "user":
		return r.set(&in.User)
	case "safety_identifier":
		return r.set(&in.SafetyIdentifier)
	case "reasoning_effort":
		return r.set(&in.ReasoningEffort)
	case "n":
		return r.setInt(&in.N)
	case "logprobs":
		in.Logprobs = r.boolean()
	case "top_logprobs":
		if !r.null() && !r.bad {
			n := r.integer()
			in.TopLogprobs = &n
		}
	case "store":
		in.Store = r.boolean()
	default:
		return false
	}
	return true
}

func readChatJSONSchema(r *jsonReader, s **chatJSONSchema) bool {
	if !r.object() {
		return true
	}
	*s = &chatJSONSchema{}
	js := *s
	readFields(r, func(key string) bool {
		switch key {
		case "name":
			return r.set(&js.Name)
		case "schema":
			return r.setRaw((*[]byte)(&js.Schema))
		case "strict":
			js.Strict = r.boolean()
			return true
		}
		return false
	})
	return true
}

// readChatCallee reads the function or custom field of a tool or a call.
func readChatCallee(r *jsonReader, key string, function **chatFunction, custom **chatCustom) bool {
	switch key {
	case "function":
		if r.object() {
			f := &chatFunction{}
			*function = f
			readFields(r, func(key string) bool { return readChatFunctionField(r, key, f) })
		}
	case "custom":
		if r.object() {
			c := &chatCustom{}
			*custom = c
			readFields(r, func(key string) bool {
				return key == "name" && r.set(&c.Name) || key == "description" && r.set(&c.Description) ||
					key == "input" && r.set(&c.Input)
			})
		}
	default:
		return false
	}
	return true
}

func readChatFunctionField(r *jsonReader, key string, f *chatFunction) bool {
	switch key {
	case "name":
		return r.set(&f.Name)
	case "description":
		return r.set(&f.Description)
	case "parameters":
		return r.setRaw((*[]byte)(&f.Parameters))
	case "arguments":
		if !r.null() && !r.bad {
			args := r.str()
			f.Arguments = &args
		}
		return true
	}
	return false
}

func readChatMessages(r *jsonReader) []chatMessage {
	if !r.array() {
		return nil
	}
	msgs := make([]chatMessage, 0, 16)
	for r.next(']') {
		var m chatMessage
		if r.object() {
			readFields(r, func(key string) bool { return readChatMessageField(r, key, &m) })
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func readChatMessageField(r *jsonReader, key string, m *chatMessage) bool {
	switch key {
	case "role":
		return r.set(&m.Role)
	case "content":
		return r.setRaw((*[]byte)(&m.Content))
	case "tool_call_id":
		return r.set(&m.ToolCallID)
	case "refusal":
		return r.set(&m.Refusal)
	case "tool_calls":
		if r.array() {
			m.ToolCalls = make([]chatCallIn, 0, 2)
			for r.next(']') {
				var c chatCallIn
				if r.object() {
					readFields(r, func(key string) bool {
						return key == "id" && r.set(&c.ID) || key == "type" && r.set(&c.Type) ||
							readChatCallee(r, key, &c.Function, &c.Custom)
					})
				}
				m.ToolCalls = append(m.ToolCalls, c)
			}
		}
		return true
	}
	return false
}

// readChatParts reads a list of content parts.
func readChatParts(raw []byte) (parts []chatPart, ok bool) {
	ok = read(raw, func(r *jsonReader) {
		if r.peek() != '[' || !r.array() {
			r.fail()
			return
		}
		parts = make([]chatPart, 0, 2)
		for r.next(']') {
			var p chatPart
			if r.object() {
				readFields(r, func(key string) bool { return readChatPartField(r, key, &p) })
			}
			parts = append(parts, p)
		}
	})
	return parts, ok
}

func readChatPartField(r *jsonReader, key string, p *chatPart) bool {
	switch key {
	case "type":
		return r.set(&p.Type)
	case "text":
		return r.set(&p.Text)
	case "refusal":
		return r.set(&p.Refusal)
	case "input_audio":
		return r.setRaw((*[]byte)(&p.InputAudio))
	case "image_url":
		if r.object() {
			p.ImageURL = &chatImageURL{}
			readFields(r, func(key string) bool { return key == "url" && r.set(&p.ImageURL.URL) })
		}
	case "file":
		if r.object() {
			f := &chatFile{}
			p.File = f
			readFields(r, func(key string) bool {
				return key == "file_data" && r.set(&f.FileData) || key == "file_id" && r.set(&f.FileID) ||
					key == "filename" && r.set(&f.Filename)
			})
		}
	default:
		return false
	}
	return true
}
