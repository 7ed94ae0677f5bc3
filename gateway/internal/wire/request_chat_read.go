package wire

import "encoding/json"

// The chat completions request read in one pass (request_reader.go): the
// same chatRequest and chatPart values encoding/json would decode, or
// false.

// readChatRequest reads body into in and returns its top-level keys; the
// literals of the strings read are registered in lits.
func readChatRequest(body []byte, in *chatRequest, lits literals) (keys []string, ok bool) {
	return readRequestKeys(body, lits, func(r *jsonReader, key string) bool {
		return readChatField(r, key, in) || readChatOption(r, key, in)
	})
}

func readChatField(r *jsonReader, key string, in *chatRequest) bool {
	switch key {
	case "model":
		return r.set(&in.Model)
	case "messages":
		in.Messages = readChatMessages(r)
	case "tools":
		in.Tools = readObjects(r, 16, func(r *jsonReader, key string, t *chatTool) bool {
			return key == "type" && r.set(&t.Type) || readChatCallee(r, key, &t.Function, &t.Custom)
		})
	case "tool_choice":
		return r.setRaw((*[]byte)(&in.ToolChoice))
	case "stop":
		return r.setRaw((*[]byte)(&in.Stop))
	case "audio":
		return r.setRaw((*[]byte)(&in.Audio))
	case "modalities":
		in.Modalities = r.strings()
	case "response_format":
		in.ResponseFormat = readObject(r, func(r *jsonReader, key string, rf *chatResponseFormat) bool {
			if key == "json_schema" {
				rf.JSONSchema = readObject(r, readChatJSONSchemaField)
				return true
			}
			return key == "type" && r.set(&rf.Type)
		})
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
		in.StreamOptions = readObject(r, func(r *jsonReader, key string, o *chatStreamOptions) bool {
			return key == "include_usage" && r.setBool(&o.IncludeUsage)
		})
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

func readChatJSONSchemaField(r *jsonReader, key string, js *chatJSONSchema) bool {
	switch key {
	case "name":
		return r.set(&js.Name)
	case "schema":
		return r.setRaw((*[]byte)(&js.Schema))
	case "strict":
		return r.setBool(&js.Strict)
	}
	return false
}

// readChatCallee reads the function or custom field of a tool or a call.
func readChatCallee(r *jsonReader, key string, function **chatFunction, custom **chatCustom) bool {
	switch key {
	case "function":
		*function = readObject(r, readChatFunctionField)
	case "custom":
		*custom = readObject(r, func(r *jsonReader, key string, c *chatCustom) bool {
			return key == "name" && r.set(&c.Name) || key == "description" && r.set(&c.Description) ||
				key == "input" && r.set(&c.Input)
		})
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
	return readObjects(r, 16, readChatMessageField)
}

func readChatMessageField(r *jsonReader, key string, m *chatMessage) bool {
	switch key {
	case "role":
		return r.set(&m.Role)
	case "content":
		m.Content, m.parts, _ = readContentIn(r, 2, false, readChatPartField)
		return true
	case "tool_call_id":
		return r.set(&m.ToolCallID)
	case "refusal":
		return r.set(&m.Refusal)
	case "tool_calls":
		m.ToolCalls = readObjects(r, 2, func(r *jsonReader, key string, c *chatCallIn) bool {
			return key == "id" && r.set(&c.ID) || key == "type" && r.set(&c.Type) ||
				readChatCallee(r, key, &c.Function, &c.Custom)
		})
		return true
	}
	return false
}

// readChatParts reads a list of content parts (no raws).
func readChatParts(raw []byte) (parts []chatPart, raws []json.RawMessage, ok bool) {
	return readList(raw, 2, false, readChatPartField)
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
		p.ImageURL = readObject(r, func(r *jsonReader, key string, u *chatImageURL) bool {
			return key == "url" && r.set(&u.URL)
		})
	case "file":
		p.File = readObject(r, func(r *jsonReader, key string, f *chatFile) bool {
			return key == "file_data" && r.set(&f.FileData) || key == "file_id" && r.set(&f.FileID) ||
				key == "filename" && r.set(&f.Filename)
		})
	default:
		return false
	}
	return true
}
