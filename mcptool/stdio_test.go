package mcptool

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bannerServerEnv makes the test binary a stdio MCP server that prints
// banners on its stdout: before the handshake, and from its "banner" tool.
const bannerServerEnv = "MCPTOOL_BANNER_SERVER"

// bannerServer is the child's body.
func bannerServer() {
	out := &lockedWriter{w: os.Stdout}
	fmt.Fprintln(out, "banner-server v1 starting (this line is not JSON)")
	fmt.Fprintln(out, "")
	srv := mcp.NewServer(&mcp.Implementation{Name: "banner", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "banner", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fmt.Fprintln(out, "DEBUG: a stray print in the middle of a session")
		return textResult("ok"), nil
	})
	srv.Run(context.Background(), &mcp.IOTransport{Reader: os.Stdin, Writer: out})
}

// lockedWriter keeps the child's stray lines and its messages whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
func (l *lockedWriter) Close() error { return nil }

// TestCommandSkipsBanners: a server that prints a non-JSON line before the
// handshake and another mid-session comes up, keeps its session, and each
// line is logged.
func TestCommandSkipsBanners(t *testing.T) {
	logs := &strings.Builder{}
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(p)
	}), nil))
	connect := Command(CommandOptions{Env: append(os.Environ(), bannerServerEnv+"=1"), Logger: logger, TerminateAfter: time.Second},
		os.Args[0], "-test.run=^$")
	p, err := NewProxy(ProxyConfig{Upstreams: []UpstreamConfig{{Name: "b", Connect: connect, ConnectTimeout: 10 * time.Second}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p.Start(ctx)
	defer p.Close()
	u := p.Upstreams()[0]
	if st := u.Status(); !st.Up {
		t.Fatalf("a server with a banner before the handshake did not come up: %+v", st)
	}
	for i := range 3 {
		res, info, err := p.Call(ctx, "banner", nil)
		if err != nil || ResultText(res) != "ok" || info.Outcome != OutcomeSuccess {
			t.Fatalf("call %d after a stray line: %v %q %+v", i, err, ResultText(res), info)
		}
	}
	if st := u.Status(); !st.Up || st.Restarts != 0 {
		t.Fatalf("the session did not survive the stray lines: %+v", st)
	}
	mu.Lock()
	text := logs.String()
	mu.Unlock()
	n := 0
	for line := range strings.Lines(text) {
		if strings.Contains(line, "non-JSON line") {
			n++
		}
	}
	if n != 4 || !strings.Contains(text, "banner-server v1 starting") || !strings.Contains(text, "a stray print") {
		t.Fatalf("%d log records of skipped lines, want 4 (the banner and three prints):\n%s", n, text)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestJSONLines: lines are passed or skipped whole, whatever their length
// and however they are split.
func TestJSONLines(t *testing.T) {
	long := strings.Repeat("x", 200<<10)
	for _, tc := range []struct{ in, want string }{
		{"{\"a\":1}\n", "{\"a\":1}\n"},
		{"hello\n{\"a\":1}\n", "{\"a\":1}\n"},
		{"  [1]\nbye\n", "  [1]\n"},
		{"\n{}\n", "\n{}\n"},
		{long + "\n{}\n", "{}\n"},
		{"{\"s\":\"" + long + "\"}\nnot json", "{\"s\":\"" + long + "\"}\n"},
	} {
		j := &jsonLines{r: bufio.NewReaderSize(strings.NewReader(tc.in), 16), log: slog.New(slog.DiscardHandler)}
		got, err := io.ReadAll(j)
		if err != nil || string(got) != tc.want {
			t.Errorf("%.40q: got %.40q, %v; want %.40q", tc.in, got, err, tc.want)
		}
	}
}
