package wire

import (
	"bytes"
	"testing"
)

// Transcoder tests of streams that trip careless translation: calls sharing
// an index, text of white space only.

// TestTranscoderChatCallIndexes: each call of a chat stream reaches the
// client whole and in order, also from servers that send every call at
// index 0 (or with no index) or repeat a call's id on each fragment.
func TestTranscoderChatCallIndexes(t *testing.T) {
	call := func(fields string) string {
		return `data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{` + fields + `}]}}]}` + "\n\n"
	}
	end := []string{`data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n", "data: [DONE]\n\n"}
	two := []scenarioTool{{id: "a", name: "f", args: []string{`{"x":1}`}}, {id: "b", name: "g", args: []string{`{"y":2}`}}}
	rows := []struct {
		name   string
		events []string
		want   []scenarioTool
	}{
		{name: "every call at index 0", events: []string{
			call(`"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}`),
			call(`"index":0,"id":"b","type":"function","function":{"name":"g","arguments":"{\"y\":2}"}`)}, want: two},
		{name: "no index", events: []string{
			call(`"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":"}`),
			call(`"function":{"arguments":"1}"}`),
			call(`"id":"b","type":"function","function":{"name":"g","arguments":"{\"y\":2}"}`)}, want: two},
		{name: "the id repeated on each fragment", events: []string{
			call(`"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\""}`),
			call(`"index":0,"id":"a","function":{"arguments":":1}"}`)}, want: two[:1]},
	}
	for _, row := range rows {
		for _, client := range []API{Messages, Responses} {
			t.Run(row.name+"/"+client.String(), func(t *testing.T) {
				out := translateStream(t, testTranslation(client, Chat), append(row.events, end...))
				got := decodeClient(t, client, out)
				if len(got.calls) != len(row.want) {
					t.Fatalf("calls %+v, want %+v\n%s", got.calls, row.want, out)
				}
				for i, want := range row.want {
					if c := got.calls[i]; c.id != want.id || c.name != want.name || !jsonEqual(c.args[0], want.args[0]) {
						t.Errorf("call %d = %+v, want %+v", i, c, want)
					}
				}
			})
		}
	}
}

// TestTranscoderBlankText: a Messages client never gets a text block of
// whitespace only (its next request would carry it to Anthropic, which
// refuses it); whitespace before other text is kept.
func TestTranscoderBlankText(t *testing.T) {
	call := []scenarioTool{{id: "call_1", name: "f", args: []string{`{}`}}}
	rows := []struct {
		name  string
		sc    streamScenario
		want  string
		calls int
	}{
		{name: "whitespace before a tool call", sc: streamScenario{text: []string{"\n", "\n "}, tools: call, prompt: 3, output: 2}, calls: 1},
		{name: "whitespace only", sc: streamScenario{text: []string{" "}, prompt: 3, output: 1}},
		{name: "whitespace before text kept", sc: streamScenario{text: []string{"\n\n", "Hi"}, prompt: 3, output: 1}, want: "\n\nHi"},
	}
	for _, row := range rows {
		for _, upstream := range []API{Chat, Responses} {
			t.Run(row.name+"/"+upstream.String(), func(t *testing.T) {
				out := translateStream(t, testTranslation(Messages, upstream), upstreamStream(upstream, row.sc))
				got := decodeMessagesClient(t, out)
				if got.text != row.want || len(got.calls) != row.calls || !got.ended {
					t.Errorf("text %q, %d calls, ended %v; want %q, %d calls\n%s", got.text, len(got.calls), got.ended, row.want, row.calls, out)
				}
				if row.want == "" && bytes.Contains(out, []byte(`"type":"text"`)) {
					t.Errorf("a whitespace-only text block:\n%s", out)
				}
			})
		}
	}
}
