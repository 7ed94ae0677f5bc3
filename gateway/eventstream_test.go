package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// frames encodes SSE events as Bedrock's eventstream frames with the
// fakes' encoder (the AWS SDK's).
func frames(sse string) []byte {
	rec := &frameRecorder{h: http.Header{}}
	ew := &eventstreamWriter{w: rec}
	ew.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(ew, sse)
	return rec.buf.Bytes()
}

// readAdapted reads b through the gateway's eventstream adapter.
func readAdapted(b []byte) (string, error) {
	resp := &http.Response{Header: http.Header{"Content-Type": {eventstreamType}}, Body: io.NopCloser(bytes.NewReader(b))}
	adaptStream(resp)
	out, err := io.ReadAll(resp.Body)
	return string(out), err
}

func TestEventstreamAdapter(t *testing.T) {
	start := `{"type":"message_start","message":{"id":"m","content":[]}}`
	delta := `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi\n"}}`
	ok := frames("event: message_start\ndata: " + start + "\n\nevent: content_block_delta\ndata: " + delta + "\n\n")
	for _, tc := range []struct {
		name    string
		in      []byte
		want    string
		wantErr bool
	}{
		{"chunks", ok, "event: message_start\ndata: " + start + "\n\nevent: content_block_delta\ndata: " + delta + "\n\n", false},
		{"an exception", frames("event: error\ndata: boom\n\n"), `event: error` + "\n" + `data: {"type":"error","error":{"type":"api_error","message":"bedrock: InternalServerException: boom"}}` + "\n\n", false},
		{"cut inside a frame", ok[:len(ok)-3], "event: message_start\ndata: " + start + "\n\n", true},
		{"a bad checksum", append(bytes.Clone(ok[:len(ok)-1]), ok[len(ok)-1]^1), "event: message_start\ndata: " + start + "\n\n", true},
		{"empty", nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAdapted(tc.in)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("got %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// FuzzEventstreamAdapter: whatever bytes a Bedrock stream sends, the
// adapter never panics, and every event it emits has a JSON data line.
func FuzzEventstreamAdapter(f *testing.F) {
	f.Add(frames("event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: error\ndata: x\n\n"))
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0, 5, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _ := readAdapted(b)
		for _, ev := range strings.Split(strings.TrimSuffix(out, "\n\n"), "\n\n") {
			if ev == "" {
				continue
			}
			_, data, ok := strings.Cut(ev, "\ndata: ")
			if !strings.HasPrefix(ev, "event: ") || !ok || !json.Valid([]byte(data)) {
				t.Fatalf("a bad event %q", ev)
			}
		}
	})
}
