package wire

import "encoding/json"

// The Messages request read in one pass (request_reader.go): the same
// msgRequest and msgBlock values encoding/json would decode, or false.

// readMsgRequest reads body into in and returns its top-level keys; the
// literals of the strings read are registered in lits.
func readMsgRequest(body []byte, in *msgRequest, lits literals) (keys []string, ok bool) {
	return readRequestKeys(body, lits, func(r *jsonReader, key string) bool { return readMsgField(r, key, in) })
}

func readMsgField(r *jsonReader, key string, in *msgRequest) bool {
	switch key {
	case "model":
		in.Model = r.str()
	case "system":
		in.System, in.systemList = readMsgContent(r)
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
		in.Metadata = readObject(r, func(r *jsonReader, key string, m *msgMetadata) bool {
			return key == "user_id" && r.set(&m.UserID)
		})
	case "thinking":
		in.Thinking = readObject(r, func(r *jsonReader, key string, t *msgThinking) bool {
			return key == "type" && r.set(&t.Type) || key == "budget_tokens" && r.setInt(&t.BudgetTokens)
		})
	case "output_config":
		in.OutputConfig = readMsgOutputConfig(r)
	default:
		return false
	}
	return true
}

func readMsgMessages(r *jsonReader) []msgMessage {
	return readObjects(r, 16, func(r *jsonReader, key string, m *msgMessage) bool {
		if key == "content" {
			m.Content, m.list = readMsgContent(r)
			return true
		}
		return key == "role" && r.set(&m.Role)
	})
}

func readMsgTools(r *jsonReader) []msgTool {
	return readObjects(r, 16, readMsgToolField)
}

func readMsgToolField(r *jsonReader, key string, t *msgTool) bool {
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
}

func readMsgToolChoice(r *jsonReader) *msgToolChoice {
	return readObject(r, func(r *jsonReader, key string, c *msgToolChoice) bool {
		switch key {
		case "type":
			return r.set(&c.Type)
		case "name":
			return r.set(&c.Name)
		case "disable_parallel_tool_use":
			return r.setBool(&c.DisableParallelToolUse)
		}
		return false
	})
}

func readMsgOutputConfig(r *jsonReader) *msgOutputConfig {
	return readObject(r, func(r *jsonReader, key string, oc *msgOutputConfig) bool {
		switch key {
		case "effort":
			return r.set(&oc.Effort)
		case "format":
			oc.Format = readObject(r, func(r *jsonReader, key string, f *msgFormat) bool {
				return key == "type" && r.set(&f.Type) || key == "schema" && r.setRaw((*[]byte)(&f.Schema))
			})
			return true
		}
		return false
	})
}

// readMsgBlocks reads a list of content blocks and each block's bytes.
func readMsgBlocks(raw []byte) (blocks []msgBlock, raws []json.RawMessage, ok bool) {
	return readList(raw, 4, true, readMsgBlockField)
}

// readMsgContent reads a content value (a string, a list of blocks, or
// null) and returns its bytes, and for a list its blocks, read in the same
// pass.
func readMsgContent(r *jsonReader) (json.RawMessage, *msgList) {
	raw, blocks, raws := readContentIn(r, 4, true, readMsgBlockField)
	if blocks == nil {
		return raw, nil
	}
	return raw, &msgList{blocks: blocks, raws: raws}
}

func readMsgBlockField(r *jsonReader, key string, b *msgBlock) bool {
	switch key {
	case "type":
		return r.set(&b.Type)
	case "text":
		return r.set(&b.Text)
	case "source":
		if r.peek() == '"' { // a search_result's source (msgSource.UnmarshalJSON)
			b.Source = &msgSource{Type: sourceString, URL: r.str()}
			return true
		}
		b.Source = readObject(r, readMsgSourceField)
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
		b.Content, b.list = readMsgContent(r)
		return true
	case "is_error":
		return r.setBool(&b.IsError)
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
