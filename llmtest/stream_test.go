package llmtest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/loopctl/loopctl-go/llmtest"
)

const oaStream = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`

// stream posts a streaming request and returns the events received (data
// payloads, in order) and the error that ended the body ("" at a clean end).
func stream(t *testing.T, ctx context.Context, srv *llmtest.Server) (events []string, status int, readErr error) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(oaStream))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	b, readErr := io.ReadAll(res.Body)
	for _, ev := range strings.SplitAfter(string(b), "\n\n") {
		if ev != "" {
			events = append(events, strings.TrimSuffix(strings.TrimPrefix(ev, "data: "), "\n\n"))
		}
	}
	return events, res.StatusCode, readErr
}

func TestStreamChunks(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Chunked("Hel", "lo")))
	defer srv.Close()
	events, status, err := stream(t, context.Background(), srv)
	if err != nil || status != 200 {
		t.Fatalf("status %d, err %v", status, err)
	}
	want := []string{`"delta":{"content":"","role":"assistant"}`, `"delta":{"content":"Hel"}`, `"delta":{"content":"lo"}`, `"finish_reason":"stop"`, `[DONE]`}
	if len(events) != len(want) {
		t.Fatalf("got %d events %q", len(events), events)
	}
	for i, w := range want {
		if !strings.Contains(events[i], w) {
			t.Errorf("event %d = %s, want it to contain %s", i, events[i], w)
		}
	}
	if !srv.Requests()[0].Stream {
		t.Error("Request.Stream not set")
	}
}

func TestStreamNoRoleAndToolCalls(t *testing.T) {
	rep := llmtest.Calls(llmtest.Call("search", `{"q":"go"}`))
	rep.NoRole = true
	srv := llmtest.NewOpenAI(llmtest.Always(rep))
	defer srv.Close()
	events, _, err := stream(t, context.Background(), srv)
	if err != nil || len(events) != 3 || !strings.Contains(events[0], `"name":"search"`) || !strings.Contains(events[1], `"finish_reason":"tool_calls"`) {
		t.Fatalf("events %q, err %v", events, err)
	}
}

func TestStreamFaults(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kind   llmtest.StreamFaultKind
		at     int
		events int    // complete events received
		last   string // the last event contains
		reset  bool   // the read ends with a connection reset
		clean  bool   // the body ends cleanly
	}{
		{name: "cut at 0", kind: llmtest.StreamCut, at: 0, events: 0},
		{name: "cut after role", kind: llmtest.StreamCut, at: 1, events: 1, last: `"role":"assistant"`},
		{name: "cut mid-event", kind: llmtest.StreamCutMidEvent, at: 2, events: 2, last: `{"choices":[{"delta"`},
		{name: "reset", kind: llmtest.StreamReset, at: 2, events: 2, last: `"content":"a"`, reset: true},
		{name: "malformed", kind: llmtest.StreamMalformed, at: 1, events: 5, last: `[DONE]`, clean: true},
		{name: "error event", kind: llmtest.StreamError, at: 2, events: 3, last: `"error":{`, clean: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Streamed(tc.kind, tc.at, "a", "b")))
			defer srv.Close()
			events, _, err := stream(t, context.Background(), srv)
			if tc.clean != (err == nil) {
				t.Fatalf("read error %v, want clean=%v", err, tc.clean)
			}
			if tc.reset && !errors.Is(err, syscall.ECONNRESET) {
				t.Errorf("read error %v, want a connection reset", err)
			}
			if !tc.clean && !tc.reset && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("read error %v, want an unexpected EOF", err)
			}
			complete := len(events)
			if complete > 0 && !tc.clean && tc.kind == llmtest.StreamCutMidEvent {
				complete-- // the half event
			}
			if complete != tc.events {
				t.Fatalf("got %d complete events %q, want %d", complete, events, tc.events)
			}
			if tc.last != "" && !strings.Contains(events[len(events)-1], tc.last) {
				t.Errorf("last event %s, want it to contain %s", events[len(events)-1], tc.last)
			}
		})
	}
}

func TestStreamStallEndsWithClient(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Streamed(llmtest.StreamStall, 0, "x")))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	events, _, err := stream(t, ctx, srv)
	if len(events) != 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("events %q, err %v", events, err)
	}
}

func TestStreamPause(t *testing.T) {
	resume := make(chan struct{})
	rep := llmtest.Chunked("a", "b")
	rep.StreamFault = &llmtest.StreamFault{At: 2, Kind: llmtest.StreamPause, Resume: resume}
	srv := llmtest.NewOpenAI(llmtest.Always(rep))
	defer srv.Close()
	res, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(oaStream))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	// The first two events arrive while the stream is paused: they were flushed.
	buf := make([]byte, 0, 4096)
	for strings.Count(string(buf), "\n\n") < 2 {
		n, err := res.Body.Read(buf[len(buf):cap(buf)])
		if err != nil {
			t.Fatal(err)
		}
		buf = buf[:len(buf)+n]
	}
	if strings.Contains(string(buf), `"b"`) {
		t.Fatalf("got past the pause: %s", buf)
	}
	close(resume)
	rest, err := io.ReadAll(res.Body)
	if err != nil || !strings.Contains(string(rest), "[DONE]") {
		t.Fatalf("rest %s, err %v", rest, err)
	}
}

func TestFaultReset(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Reset()))
	defer srv.Close()
	_, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(oaUser))
	if err == nil {
		t.Fatal("no error from a reset connection")
	}
}

// The official Go client reads the stream as OpenAI's.
func TestStreamWithOpenAIClient(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Chunked("Hel", "lo")))
	defer srv.Close()
	c := openai.NewClient(option.WithBaseURL(srv.BaseURL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
	s := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model:    "m",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	var acc openai.ChatCompletionAccumulator
	for s.Next() {
		acc.AddChunk(s.Current())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if got := acc.Choices[0].Message.Content; got != "Hello" {
		t.Fatalf("content %q", got)
	}
}
