package wire

import "encoding/json"

// The Messages request read in one pass (request_reader.go): the same
// msgRequest and msgBlock values encoding/json would decode, or false.

// readMsgRequest reads body into in and returns its top-level keys.
func readMsgRequest(body []byte, in *msgRequest) (keys []string, ok bool) {
	ok = read(body, func(r *jsonReader) {
		if r.peek() != '{' || !r.object() {
			r.fail()
			return
		}
		var seen keySet
		for r.next('}') {
			key := r.newKey(&seen)
			keys = append(keys, key)
			readMsgField(r, key, in)
		}
	})
	return keys, ok
}

func readMsgField(r *jsonReader, key string, in *msgRequest) {
	switch key {
	case "model":
		in.Model = r.str()
	case "system":
		in.System = r.raw()
	case "messages":
		in.Messages = readMsgMessages(r)
	case "tools":
		in.Tools = readMsgTools(r)
	case "tool_choice":
		in.ToolChoice = readMsgToolChoice(r)
	case "max_tokens":
		in.MaxTokens = r.integer()
	case "temperature":
		in.Temperature = r.float()
	case "top_p":
		in.TopP = r.float()
	case "stop_sequences":
		in.StopSequences = r.strings()
	case "stream":
		in.Stream = r.boolean()
	case "metadata":
		if r.object() {
			in.Metadata = &msgMetadata{}
			readFields(r, func(key string) bool {
				return key == "user_id" && r.set(&in.Metadata.UserID)
			})
		}
	case "thinking":
		if r.object() {
			t := &msgThinking{}
			in.Thinking = t
			readFields(r, func(key string) bool {
				return key == "type" && r.set(&t.Type) || key == "budget_tokens" && r.setInt(&t.BudgetTokens)
			})
		}
	case "output_config":
		in.OutputConfig = readMsgOutputConfig(r)
	default:
		r.skip()
	}
}

// readFields reads the fields of an object whose '{' is read: field reads
// a known field and reports true; any other field is skipped.
func readFields(r *jsonReader, field func(key string) bool) {
	var seen keySet
	for r.next('}') {
		if !field(r.newKey(&seen)) {
			r.skip()
		}
	}
}

// set and setInt read a string or int field; true, for readFields.
func (r *jsonReader) set(s *string) bool {
	*s = r.str()
	return true
}

func (r *jsonReader) setInt(n *int) bool {
	*n = r.integer()
	return true
}

func (r *jsonReader) setRaw(raw *[]byte) bool {
	*raw = r.raw()
	return true
}

func readMsgMessages(r *jsonReader) []msgMessage {
	if !r.array() {
		return nil
	}
	msgs := make([]msgMessage, 0, 16)
	for r.next(']') {
		var m msgMessage
		if r.object() {
			readFields(r, func(key string) bool {
				return key == "role" && r.set(&m.Role) || key == "content" && r.setRaw((*[]byte)(&m.Content))
			})
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func readMsgTools(r *jsonReader) []msgTool {
	if !r.array() {
		return nil
	}
	tools := make([]msgTool, 0, 16)
	for r.next(']') {
		var t msgTool
		if r.object() {
			readFields(r, func(key string) bool {
				switch key {
				case "type":
					return r.set(&t.Type)
				case "name":
					return r.set(&t.Name)
				case "description":
					return r.set(&t.Description)
				case "input_schema":
					return r.setRaw((*[]byte)(&t.InputSchema))
				case "cache_control":
					return r.setRaw((*[]byte)(&t.CacheControl))
				}
				return false
			})
		}
		tools = append(tools, t)
	}
	return tools
}

func readMsgToolChoice(r *jsonReader) *msgToolChoice {
	if !r.object() {
		return nil
	}
	c := &msgToolChoice{}
	readFields(r, func(key string) bool {
		switch key {
		case "type":
			return r.set(&c.Type)
		case "name":
			return r.set(&c.Name)
		case "disable_parallel_tool_use":
			c.DisableParallelToolUse = r.boolean()
			return true
		}
		return false
	})
	return c
}

func readMsgOutputConfig(r *jsonReader) *msgOutputConfig {
	if !r.object() {
		return nil
	}
	oc := &msgOutputConfig{}
	readFields(r, func(key string) bool {
		switch key {
		case "effort":
			return r.set(&oc.Effort)
		case "format":
			if r.object() {
				f := &msgFormat{}
				oc.Format = f
				readFields(r, func(key string) bool {
					return key == "type" && r.set(&f.Type) || key == "schema" && r.setRaw((*[]byte)(&f.Schema))
				})
			}
			return true
		}
		return false
	})
	return oc
}

// readMsgBlocks reads a list of content blocks and each block's bytes.
func readMsgBlocks(raw []byte) (blocks []msgBlock, raws []json.RawMessage, ok bool) {
	ok = read(raw, func(r *jsonReader) {
		if r.peek() != '[' || !r.array() {
			r.fail()
			return
		}
		blocks = make([]msgBlock, 0, 4)
		raws = make([]json.RawMessage, 0, 4)
		for r.next(']') {
			r.peek()
			start := r.i
			var b msgBlock
			if r.object() {
				readFields(r, func(key string) bool { return readMsgBlockField(r, key, &b) })
			}
			blocks = append(blocks, b)
			raws = append(raws, r.b[start:r.i:r.i])
		}
	})
	return blocks, raws, ok
}

func readMsgBlockField(r *jsonReader, key string, b *msgBlock) bool {
	switch key {
	case "type":
		return r.set(&b.Type)
	case "text":
		return r.set(&b.Text)
	case "source":
		if r.object() {
			s := &msgSource{}
			b.Source = s
			readFields(r, func(key string) bool { return readMsgSourceField(r, key, s) })
		}
		return true
	case "title":
		return r.set(&b.Title)
	case "id":
		return r.set(&b.ID)
	case "name":
		return r.set(&b.Name)
	case "input":
		return r.setRaw((*[]byte)(&b.Input))
	case "tool_use_id":
		return r.set(&b.ToolUseID)
	case "content":
		return r.setRaw((*[]byte)(&b.Content))
	case "is_error":
		b.IsError = r.boolean()
		return true
	case "signature":
		return r.set(&b.Signature)
	case "cache_control":
		return r.setRaw((*[]byte)(&b.CacheControl))
	}
	return false
}

func readMsgSourceField(r *jsonReader, key string, s *msgSource) bool {
	switch key {
	case "type":
		return r.set(&s.Type)
	case "media_type":
		return r.set(&s.MediaType)
	case "data":
		return r.set(&s.Data)
	case "url":
		return r.set(&s.URL)
	case "file_id":
		return r.set(&s.FileID)
	case "content":
		return r.setRaw((*[]byte)(&s.Content))
	}
	return false
}
