package mcptool

import (
	"bytes"
	"io"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// chunked reads b in pieces of at most n bytes.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.b))
	copy(p, c.b[:k])
	c.b = c.b[k:]
	return k, nil
}

// scanRelays passes stream through a sseScanner in pieces of at most n bytes
// and returns what it read and the progress values relayed for token "t".
func scanRelays(t *testing.T, stream []byte, n int) ([]byte, []float64) {
	t.Helper()
	u := &Upstream{}
	var got []float64
	u.progress.Store("t", func(p *mcp.ProgressNotificationParams) { got = append(got, p.Progress) })
	s := &sseScanner{ReadCloser: io.NopCloser(&chunked{b: stream, n: n}), u: u}
	out, err := io.ReadAll(s)
	if err != nil {
		t.Fatal(err)
	}
	return out, got
}

// FuzzSSEScanner: the stream passes through unchanged however it is split,
// and what is relayed does not depend on the split.
func FuzzSSEScanner(f *testing.F) {
	f.Add([]byte("id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":50}}\n\n"), 3)
	f.Add([]byte("data: {\"jsonrpc\":\"2.0\",\r\ndata: \"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\r\n\r\nretry: 5\n\n"), 1)
	f.Add([]byte(": comment\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"), 7)
	f.Fuzz(func(t *testing.T, stream []byte, n int) {
		if n <= 0 {
			n = 1
		}
		whole, want := scanRelays(t, stream, len(stream)+1)
		out, got := scanRelays(t, stream, n)
		if !bytes.Equal(out, stream) || !bytes.Equal(whole, stream) {
			t.Fatalf("the stream was changed")
		}
		if len(got) != len(want) {
			t.Fatalf("split in %d-byte pieces relayed %v, whole %v", n, got, want)
		}
	})
}

func TestSSEScannerRelaysAcrossSplits(t *testing.T) {
	stream := []byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":50}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"other\",\"progress\":7}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	for _, n := range []int{1, 2, 5, 64, len(stream)} {
		if _, got := scanRelays(t, stream, n); len(got) != 1 || got[0] != 50 {
			t.Fatalf("pieces of %d: relayed %v, want [50]", n, got)
		}
	}
}
