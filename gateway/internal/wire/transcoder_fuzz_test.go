package wire

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzTranscoder feeds random events to every pair (with stop sequences
// cut locally, with custom client tools): no panic, and every emitted
// event is framed and its data is JSON (or [DONE]).
func FuzzTranscoder(f *testing.F) {
	for i, pair := range crossPairs {
		for _, ev := range upstreamStream(pair.to, weatherScenario) {
			f.Add(uint8(i), ev)
		}
	}
	for _, row := range argumentStreams {
		f.Add(uint8(1), strings.Join(responsesCallStream(row.item, row.events), ""))
		f.Add(uint8(3), strings.Join(responsesCallStream(row.item, row.events), ""))
		f.Add(uint8(0x45), strings.Join(responsesCallStream(row.item, row.events), "")) // 0x45 % 6: chat client, custom tools
	}
	f.Add(uint8(0), "data: {\"type\":\"content_block_delta\",\"index\":7,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\u0000\\ud800\"}}\n\n")
	f.Add(uint8(3), "data: {\"choices\":[{\"delta\":{\"content\":\"\\u2028\\\"\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n")
	f.Fuzz(func(t *testing.T, pairIndex uint8, stream string) {
		pair := crossPairs[int(pairIndex)%len(crossPairs)]
		tr := testTranslation(pair.from, pair.to)
		if pairIndex&0x80 != 0 {
			tr.stops = []string{"END", "\n\n"}
		}
		if pairIndex&0x40 != 0 {
			tr.tools = map[string]Tool{"get": {Name: "get", Custom: true}, "get_weather": {Name: "get_weather", Custom: true}}
		}
		s := tr.Stream()
		var out []byte
		for _, ev := range strings.SplitAfter(stream, "\n\n") {
			var err error
			if out, err = s.Event(out, []byte(ev)); err != nil {
				return
			}
		}
		checkFraming(t, out)
	})
}

// checkFraming checks every client event ends with a blank line and
// carries JSON data or [DONE].
func checkFraming(t *testing.T, out []byte) {
	t.Helper()
	for _, ev := range bytes.SplitAfter(out, []byte("\n\n")) {
		if len(ev) == 0 {
			continue
		}
		if !bytes.HasSuffix(ev, []byte("\n\n")) {
			t.Fatalf("unterminated event %q", ev)
		}
		data := parseSSE(ev).data
		if string(data) != "[DONE]" && !json.Valid(data) {
			t.Fatalf("invalid JSON data %q", data)
		}
	}
}

// BenchmarkTranscoder translates a chat text stream for a Messages client.
func BenchmarkTranscoder(b *testing.B) {
	text := make([]string, 50)
	for i := range text {
		text[i] = "word and more "
	}
	events := upstreamStream(Chat, streamScenario{text: text, prompt: 100, cached: 40, output: 50})
	raw := make([][]byte, len(events))
	for i, ev := range events {
		raw[i] = []byte(ev)
	}
	tr := testTranslation(Messages, Chat)
	out := make([]byte, 0, 64<<10)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s := tr.Stream()
		out = out[:0]
		for _, ev := range raw {
			out, _ = s.Event(out, ev)
		}
	}
	b.ReportMetric(float64(len(raw)), "events/op")
}
