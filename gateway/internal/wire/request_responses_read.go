package wire

import "encoding/json"

// The Responses request read in one pass (request_reader.go): the same
// respRequest, respItem and respPart values encoding/json would decode,
// or false.

// readRespRequest reads body into in and returns its top-level keys; the
// literals of the strings read are registered in lits.
func readRespRequest(body []byte, in *respRequest, lits literals) (keys []string, ok bool) {
	return readRequestKeys(body, lits, func(r *jsonReader, key string) bool { return readRespField(r, key, in) })
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
		in.Input, in.items, in.itemRaws = readContentIn(r, 32, true, readRespItemField)
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
		in.Reasoning = readObject(r, func(r *jsonReader, key string, re *respReasoning) bool {
			return key == "effort" && r.set(&re.Effort)
		})
	case "text":
		in.Text = readObject(r, func(r *jsonReader, key string, t *respText) bool {
			if key != "format" {
				return false
			}
			t.Format = readObject(r, readRespFormatField)
			return true
		})
	default:
		return false
	}
	return true
}

func readRespFormatField(r *jsonReader, key string, f *respFormat) bool {
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
}

func readRespTools(r *jsonReader) []respTool {
	return readObjects(r, 16, readRespToolField)
}

func readRespToolField(r *jsonReader, key string, t *respTool) bool {
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
}

// readRespItems reads a list of input items and each item's bytes.
func readRespItems(raw []byte) (items []respItem, raws []json.RawMessage, ok bool) {
	return readList(raw, 32, true, readRespItemField)
}

func readRespItemField(r *jsonReader, key string, item *respItem) bool {
	switch key {
	case "type":
		return r.set(&item.Type)
	case "role":
		return r.set(&item.Role)
	case "content":
		item.Content, item.content, _ = readContentIn(r, 2, false, readRespPartField)
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
		item.Output, item.output, _ = readContentIn(r, 2, false, readRespPartField)
	default:
		return false
	}
	return true
}

// readRespParts reads a list of content parts (no raws).
func readRespParts(raw []byte) (parts []respPart, raws []json.RawMessage, ok bool) {
	return readList(raw, 2, false, readRespPartField)
}

func readRespPartField(r *jsonReader, key string, p *respPart) bool {
	field := respPartField(p, key)
	return field != nil && r.set(field)
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
