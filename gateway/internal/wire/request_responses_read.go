package wire

import "encoding/json"

// The Responses request read in one pass (request_reader.go): the same
// respRequest, respItem and respPart values encoding/json would decode,
// or false.

// readRespRequest reads body into in and returns its top-level keys.
func readRespRequest(body []byte, in *respRequest) (keys []string, ok bool) {
	ok = read(body, func(r *jsonReader) {
		if r.peek() != '{' || !r.object() {
			r.fail()
			return
		}
		var seen keySet
		for r.next('}') {
			key := r.newKey(&seen)
			keys = append(keys, key)
			if !readRespField(r, key, in) {
				r.skip()
			}
		}
	})
	return keys, ok
}

func readRespField(r *jsonReader, key string, in *respRequest) bool {
	switch key {
	case "model":
		return r.set(&in.Model)
	case "instructions":
		return r.set(&in.Instructions)
	case "user":
		return r.set(&in.User)
	case "safety_identifier":
		return r.set(&in.SafetyIdentifier)
	case "previous_response_id":
		return r.set(&in.PreviousResponseID)
	case "input":
		return r.setRaw((*[]byte)(&in.Input))
	case "tool_choice":
		return r.setRaw((*[]byte)(&in.ToolChoice))
	case "prompt":
		return r.setRaw((*[]byte)(&in.Prompt))
	case "conversation":
		return r.setRaw((*[]byte)(&in.Conversation))
	case "tools":
		in.Tools = readRespTools(r)
	case "parallel_tool_calls":
		in.ParallelToolCalls = r.boolPtr()
	case "max_output_tokens":
		return r.setInt(&in.MaxOutputTokens)
	case "top_logprobs":
		return r.setInt(&in.TopLogprobs)
	case "temperature":
		in.Temperature = r.float()
	case "top_p":
		in.TopP = r.float()
	case "stream":
		in.Stream = r.boolean()
	case "background":
		in.Background = r.boolean()
	case "store":
		in.Store = r.boolean()
	case "reasoning":
		if r.object() {
			in.Reasoning = &respReasoning{}
			readFields(r, func(key string) bool { return key == "effort" && r.set(&in.Reasoning.Effort) })
		}
	case "text":
		if r.object() {
			in.Text = &respText{}
			readFields(r, func(key string) bool { return key == "format" && readRespFormat(r, &in.Text.Format) })
		}
	default:
		return false
	}
	return true
}

func readRespFormat(r *jsonReader, format **respFormat) bool {
	if !r.object() {
		return true
	}
	f := &respFormat{}
	*format = f
	readFields(r, func(key string) bool {
		switch key {
		case "type":
			return r.set(&f.Type)
		case "name":
			return r.set(&f.Name)
		case "schema":
			return r.setRaw((*[]byte)(&f.Schema))
		case "strict":
			f.Strict = r.boolPtr()
			return true
		}
		return false
	})
	return true
}

func readRespTools(r *jsonReader) []respTool {
	if !r.array() {
		return nil
	}
	tools := make([]respTool, 0, 16)
	for r.next(']') {
		var t respTool
		if r.object() {
			readFields(r, func(key string) bool {
				switch key {
				case "type":
					return r.set(&t.Type)
				case "name":
					return r.set(&t.Name)
				case "description":
					return r.set(&t.Description)
				case "parameters":
					return r.setRaw((*[]byte)(&t.Parameters))
				case "tools":
					t.Tools = readRespTools(r)
					return true
				}
				return false
			})
		}
		tools = append(tools, t)
	}
	return tools
}

// readRespItems reads a list of input items and each item's bytes.
func readRespItems(raw []byte) (items []respItem, raws []json.RawMessage, ok bool) {
	ok = read(raw, func(r *jsonReader) {
		if r.peek() != '[' || !r.array() {
			r.fail()
			return
		}
		items = make([]respItem, 0, 32)
		raws = make([]json.RawMessage, 0, 32)
		for r.next(']') {
			r.peek()
			start := r.i
			var item respItem
			if r.object() {
				readFields(r, func(key string) bool { return readRespItemField(r, key, &item) })
			}
			items = append(items, item)
			raws = append(raws, r.b[start:r.i:r.i])
		}
	})
	return items, raws, ok
}

func readRespItemField(r *jsonReader, key string, item *respItem) bool {
	switch key {
	case "type":
		return r.set(&item.Type)
	case "role":
		return r.set(&item.Role)
	case "content":
		return r.setRaw((*[]byte)(&item.Content))
	case "call_id":
		return r.set(&item.CallID)
	case "name":
		return r.set(&item.Name)
	case "namespace":
		return r.set(&item.Namespace)
	case "arguments":
		return r.set(&item.Arguments)
	case "input":
		return r.set(&item.Input)
	case "output":
		return r.setRaw((*[]byte)(&item.Output))
	}
	return false
}

// readRespParts reads a list of content parts.
func readRespParts(raw []byte) (parts []respPart, ok bool) {
	ok = read(raw, func(r *jsonReader) {
		if r.peek() != '[' || !r.array() {
			r.fail()
			return
		}
		parts = make([]respPart, 0, 2)
		for r.next(']') {
			var p respPart
			if r.object() {
				readFields(r, func(key string) bool {
					field := respPartField(&p, key)
					return field != nil && r.set(field)
				})
			}
			parts = append(parts, p)
		}
	})
	return parts, ok
}

// respPartField is the field of p a key names; nil for another key.
func respPartField(p *respPart, key string) *string {
	switch key {
	case "type":
		return &p.Type
	case "text":
		return &p.Text
	case "refusal":
		return &p.Refusal
	case "image_url":
		return &p.ImageURL
	case "file_id":
		return &p.FileID
	case "file_data":
		return &p.FileData
	case "file_url":
		return &p.FileURL
	case "filename":
		return &p.Filename
	}
	return nil
}
