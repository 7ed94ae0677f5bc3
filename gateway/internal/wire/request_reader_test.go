package wire

import (
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

// takeList checks the blocks a Messages reader decoded in its one pass
// (a content list, a tool result's content) against json.Unmarshal of
// raw, each block's bytes too, and clears them: encoding/json has no such
// field.
func takeList(t *testing.T, raw json.RawMessage, l **msgList) {
	t.Helper()
	if *l == nil {
		if len(raw) > 0 && raw[0] == '[' {
			t.Fatalf("a content list the reader left unread: %s", raw)
		}
		return
	}
	got := (*l).blocks
	for i := range got {
		takeList(t, got[i].Content, &got[i].list)
	}
	var want []msgBlock
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("blocks %s read, json.Unmarshal: %v", raw, err)
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual((*l).raws, rawElements(raw)) {
		t.Fatalf("blocks of %s:\ngot  %#v %q\nwant %#v", raw, got, (*l).raws, want)
	}
	*l = nil
}

func checkReaders(t *testing.T, body []byte) {
	sameAsUnmarshal(t, "messages", body, func(b []byte) (msgRequest, bool) {
		var in msgRequest
		keys, ok := readMsgRequest(b, &in)
		if ok && !slices.Equal(keys, topLevelKeys(b)) {
			t.Fatalf("keys %q, want %q", keys, topLevelKeys(b))
		}
		if ok {
			takeList(t, in.System, &in.systemList)
			for i := range in.Messages {
				takeList(t, in.Messages[i].Content, &in.Messages[i].list)
			}
		}
		return in, ok
	})
	sameAsUnmarshal(t, "chat", body, func(b []byte) (chatRequest, bool) {
		var in chatRequest
		_, ok := readChatRequest(b, &in)
		return in, ok
	})
	sameAsUnmarshal(t, "responses", body, func(b []byte) (respRequest, bool) {
		var in respRequest
		_, ok := readRespRequest(b, &in)
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
		return blocks, ok
	})
	sameAsUnmarshal(t, "chat parts", body, func(b []byte) ([]chatPart, bool) {
		parts, _, ok := readChatParts(b)
		return parts, ok
	})
	sameAsUnmarshal(t, "items", body, func(b []byte) ([]respItem, bool) {
		items, _, ok := readRespItems(b)
		return items, ok
	})
	sameAsUnmarshal(t, "responses parts", body, func(b []byte) ([]respPart, bool) {
		parts, _, ok := readRespParts(b)
		return parts, ok
	})
}

// FuzzReaders: the one-pass readers read what encoding/json reads, or
// leave the body to it.
func FuzzReaders(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","max_tokens":5,"temperature":0.5,"stop_sequences":["a"],"system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"QQ=="}}]}],"tools":[{"name":"f","input_schema":{"A":1}}],"x":null}`,
		`{"model":"g","messages":[{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}],"top_logprobs":null,"stream_options":{"include_usage":true},"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{},"strict":true}}}`,
		`{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"\u00e9\ud83d\ude00"}]},null],"tools":[{"type":"namespace","tools":[{"type":"function","name":"f"}]}],"text":{"format":{"strict":false}}}`,
		`[{"type":"text","text":"a\nb","cache_control":null},{"type":"tool_result","content":[1,2]}]`,
		`[{"type":"input_file","file_data":"x","filename":"f"}]`,
		`{"Model":"x"}`, `{"model":1}`, `{"max_tokens":1.5}`, `{"a":1,"a":2}`, `[1,]`, `{"model":"\xff"}`, ` {} `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkReaders(t, body) })
}

// TestReadersTakeOnePass: the benchmark's histories are read in one pass
// on every wire (not left to encoding/json).
func TestReadersTakeOnePass(t *testing.T) {
	body := claudeCodeRequest()
	var m msgRequest
	if _, ok := readMsgRequest(body, &m); !ok {
		t.Fatal("messages request left to encoding/json")
	}
	for _, msg := range m.Messages {
		if msg.Content[0] == '[' {
			if _, _, ok := readMsgBlocks(msg.Content); !ok {
				t.Fatalf("blocks %s left to encoding/json", msg.Content)
			}
		}
	}
	toChat, _ := Translate(Messages, body, Target{API: Chat})
	var c chatRequest
	if _, ok := readChatRequest(toChat.Body, &c); !ok {
		t.Fatal("chat request left to encoding/json")
	}
	toResp, _ := Translate(Messages, body, Target{API: Responses})
	var r respRequest
	if _, ok := readRespRequest(toResp.Body, &r); !ok {
		t.Fatal("responses request left to encoding/json")
	}
	if _, _, ok := readRespItems(r.Input); !ok {
		t.Fatal("responses input left to encoding/json")
	}
	checkReaders(t, body)
	checkReaders(t, toChat.Body)
	checkReaders(t, toResp.Body)
}
