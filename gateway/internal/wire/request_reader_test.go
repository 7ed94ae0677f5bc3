package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// sameAsUnmarshal checks what a one-pass reader read against
// encoding/json: when the reader succeeds, json.Unmarshal must succeed
// with the same value.
func sameAsUnmarshal[T any](t *testing.T, name string, body []byte, read func([]byte) (T, bool)) {
	t.Helper()
	got, ok := read(body)
	if !ok {
		return
	}
	var want T
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatalf("%s read %q, json.Unmarshal: %v", name, body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s of %q:\ngot  %#v\nwant %#v", name, body, got, want)
	}
}

// takeRead checks a list a reader decoded in its one pass (a content
// list, a Responses input) against json.Unmarshal of raw, and raws, when
// not nil, against raw's elements, after inner has checked and cleared
// the lists each element holds; then it clears them: encoding/json has no
// such field. A list raw holds must have been read.
func takeRead[T any](t *testing.T, raw json.RawMessage, list *[]T, raws *[]json.RawMessage, inner func(v *T)) {
	t.Helper()
	if *list == nil {
		if len(raw) > 0 && raw[0] == '[' {
			t.Fatalf("a list the reader left unread: %s", raw)
		}
		return
	}
	for i := range *list {
		inner(&(*list)[i])
	}
	var want []T
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("list %s read, json.Unmarshal: %v", raw, err)
	}
	if !reflect.DeepEqual(*list, want) {
		t.Fatalf("list %s:\ngot  %#v\nwant %#v", raw, *list, want)
	}
	if raws != nil && !reflect.DeepEqual(*raws, rawElements(raw)) {
		t.Fatalf("elements of %s: %q", raw, *raws)
	}
	*list = nil
	if raws != nil {
		*raws = nil
	}
}

// takeList is takeRead for a Messages content list (and each tool
// result's content in it).
func takeList(t *testing.T, raw json.RawMessage, l **msgList) {
	t.Helper()
	var blocks []msgBlock
	var raws []json.RawMessage
	if *l != nil {
		blocks, raws = (*l).blocks, (*l).raws
	}
	takeRead(t, raw, &blocks, &raws, func(b *msgBlock) { takeList(t, b.Content, &b.list) })
	*l = nil
}

// takeChatParts is takeRead for a chat message's content parts.
func takeChatParts(t *testing.T, m *chatMessage) {
	t.Helper()
	takeRead(t, m.Content, &m.parts, nil, func(*chatPart) {})
}

// takeItem is takeRead for a Responses item's content and output parts.
func takeItem(t *testing.T, item *respItem) {
	t.Helper()
	takeRead(t, item.Content, &item.content, nil, func(*respPart) {})
	takeRead(t, item.Output, &item.output, nil, func(*respPart) {})
}

// sameKeys checks the top-level keys a request reader returned.
func sameKeys(t *testing.T, body []byte, keys []string) {
	t.Helper()
	if !slices.Equal(keys, topLevelKeys(body)) {
		t.Fatalf("keys %q, want %q", keys, topLevelKeys(body))
	}
}

func checkReaders(t *testing.T, body []byte) {
	sameAsUnmarshal(t, "messages", body, func(b []byte) (msgRequest, bool) {
		var in msgRequest
		lits := literals{}
		keys, ok := readMsgRequest(b, &in, lits)
		if ok {
			checkLiterals(t, lits)
			sameKeys(t, b, keys)
			takeList(t, in.System, &in.systemList)
			for i := range in.Messages {
				takeList(t, in.Messages[i].Content, &in.Messages[i].list)
			}
		}
		return in, ok
	})
	sameAsUnmarshal(t, "chat", body, func(b []byte) (chatRequest, bool) {
		var in chatRequest
		lits := literals{}
		keys, ok := readChatRequest(b, &in, lits)
		if ok {
			checkLiterals(t, lits)
			sameKeys(t, b, keys)
			for i := range in.Messages {
				takeChatParts(t, &in.Messages[i])
			}
		}
		return in, ok
	})
	sameAsUnmarshal(t, "responses", body, func(b []byte) (respRequest, bool) {
		var in respRequest
		lits := literals{}
		keys, ok := readRespRequest(b, &in, lits)
		if ok {
			checkLiterals(t, lits)
			sameKeys(t, b, keys)
			takeRead(t, in.Input, &in.items, &in.itemRaws, func(item *respItem) { takeItem(t, item) })
		}
		return in, ok
	})
	// The list readers read a value a strict reader has read already
	// (readChecked): on other bytes they must only not panic.
	if !json.Valid(body) {
		_, _, _ = readMsgBlocks(body)
		_, _, _ = readChatParts(body)
		_, _, _ = readRespItems(body)
		_, _, _ = readRespParts(body)
	} else {
		checkListReaders(t, body)
	}
	if validJSON(body) != json.Valid(body) {
		t.Fatalf("validJSON(%q) = %v", body, !json.Valid(body))
	}
}

// checkListReaders is checkReaders for the list readers, on valid JSON.
func checkListReaders(t *testing.T, body []byte) {
	sameAsUnmarshal(t, "blocks", body, func(b []byte) ([]msgBlock, bool) {
		blocks, _, ok := readMsgBlocks(b)
		for i := 0; ok && i < len(blocks); i++ {
			takeList(t, blocks[i].Content, &blocks[i].list)
		}
		return blocks, ok
	})
	sameAsUnmarshal(t, "chat parts", body, func(b []byte) ([]chatPart, bool) {
		parts, _, ok := readChatParts(b)
		return parts, ok
	})
	sameAsUnmarshal(t, "items", body, func(b []byte) ([]respItem, bool) {
		items, _, ok := readRespItems(b)
		for i := 0; ok && i < len(items); i++ {
			takeItem(t, &items[i])
		}
		return items, ok
	})
	sameAsUnmarshal(t, "responses parts", body, func(b []byte) ([]respPart, bool) {
		parts, _, ok := readRespParts(b)
		return parts, ok
	})
}

// FuzzReaders: the one-pass readers read what encoding/json reads, or
// leave the body to it; the literals they register decode exactly to
// their strings.
func FuzzReaders(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":5,"temperature":0.5,"stop_sequences":["a"],"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"QQ=="}}]}],"tools":[{"name":"f","input_schema":{"A":1}}],"x":null}`,
		`{"model":"g","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}],"top_logprobs":null,"stream_options":{"include_usage":true},"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{},"strict":true}}}`,
		`{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"\u00e9\ud83d\ude00"}]},null],"tools":[{"type":"namespace","tools":[{"type":"function","name":"f"}]}],"text":{"format":{"strict":false}}}`,
		`[{"type":"text","text":"a\nb","cache_control":null},{"type":"tool_result","content":[1,2]}]`,
		`[{"type":"input_file","file_data":"x","filename":"f"}]`,
		`[{"type":"tool_result","content":[{"type":"text","text":"r"}]},{"type":"tool_result","content":[]}]`,
		`[{"type":"message","content":[{"type":"input_text","text":"t"}]},{"type":"function_call_output","output":[{"type":"input_text","text":"o"}]},{"output":"s"}]`,
		chatLists, respLists,
		`{"Model":"x"}`, `{"model":1}`, `{"max_tokens":1.5}`, `{"a":1,"a":2}`, `[1,]`, `{"model":"\xff"}`, ` {} `,
	} {
		f.Add([]byte(s))
	}
	for _, b := range literalBodies {
		f.Add([]byte(b.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkReaders(t, body) })
}

// chatLists and respLists are requests whose content lists hold each kind
// of part the decoders read.
const (
	chatLists = `{"model":"g","messages":[{"role":"system","content":[{"type":"text","text":"s1"},{"type":"text","text":"s2"}]},` +
		`{"role":"user","content":[{"type":"text","text":"q \u00e9"},{"type":"image_url","image_url":{"url":"data:image/png;base64,QQ=="}},` +
		`{"type":"image_url","image_url":{"url":"https://x/y.png"}},{"type":"file","file":{"file_data":"QQ==","filename":"a.pdf"}},` +
		`{"type":"file","file":{"file_id":"f"}},{"type":"input_audio","input_audio":{"data":"QQ==","format":"wav"}},{"type":"other"},null]},` +
		`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"refusal","refusal":"r"}],"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c","content":[{"type":"text","text":"Error: no"}]},{"role":"user","content":[]},{"role":"user","content":null}]}`
	respLists = `{"model":"g","input":[{"role":"developer","content":[{"type":"input_text","text":"d"}]},` +
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"q"},{"type":"input_image","image_url":"data:image/png;base64,QQ=="},` +
		`{"type":"input_file","file_url":"https://x/a.pdf","filename":"a.pdf"},{"type":"input_file","file_data":"QQ=="},{"type":"input_image","file_id":"f"},{"type":"input_audio"}]},` +
		`{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"e"},` +
		`{"type":"function_call","call_id":"c","name":"f","arguments":"{\"x\":1}"},` +
		`{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"Error: r"},{"type":"input_image","image_url":"https://x/i.png"}]},` +
		`{"type":"custom_tool_call","call_id":"d","name":"p","input":"x"},{"type":"custom_tool_call_output","call_id":"d","output":"ok"},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"a"},{"type":"refusal","refusal":"no"}]},` +
		`{"type":"web_search_call","action":{"query":"q"}},{"type":"item_reference","id":"i"},null]}`
)

// readsInOnePass reports whether api's one-pass reader reads body.
func readsInOnePass(api API, body []byte) bool {
	var ok bool
	switch api {
	case Messages:
		_, ok = readMsgRequest(body, new(msgRequest), nil)
	case Chat:
		_, ok = readChatRequest(body, new(chatRequest), nil)
	case Responses:
		_, ok = readRespRequest(body, new(respRequest), nil)
	}
	return ok
}

// TestReadersTakeOnePass: the benchmark's histories, and requests whose
// content lists hold each kind of part, are read in one pass on every
// wire (not left to encoding/json), their content lists in that pass too
// (checkReaders); and the request decoded from that pass is the one
// decoded after encoding/json (the body with a key escaped, which the
// reader leaves to it).
func TestReadersTakeOnePass(t *testing.T) {
	body := claudeCodeRequest()
	toChat, _ := Translate(Messages, body, Target{API: Chat})
	toResp, _ := Translate(Messages, body, Target{API: Responses})
	tests := []struct {
		name string
		api  API
		body []byte
	}{
		{name: "messages", api: Messages, body: body},
		{name: "chat", api: Chat, body: toChat.Body},
		{name: "responses", api: Responses, body: toResp.Body},
		{name: "chat lists", api: Chat, body: []byte(chatLists)},
		{name: "responses lists", api: Responses, body: []byte(respLists)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !readsInOnePass(tt.api, tt.body) {
				t.Fatal("request left to encoding/json")
			}
			checkReaders(t, tt.body)
			slow := bytes.Replace(tt.body, []byte(`"model":`), []byte(`"m\u006fdel":`), 1)
			if readsInOnePass(tt.api, slow) {
				t.Fatalf("%.80s... read in one pass", slow)
			}
			got, err := decodeRequest(tt.api, tt.body)
			want, wantErr := decodeRequest(tt.api, slow)
			if err == nil && wantErr == nil {
				got.lits, want.lits = nil, nil // encoding/json reads no literals
			}
			if err != nil || wantErr != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("one pass: %v %#v\nencoding/json: %v %#v", err, got, wantErr, want)
			}
		})
	}
}
