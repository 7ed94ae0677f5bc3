package llmtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/loopctl/loopctl-go/llmtest"
)

func oaClient(srv *llmtest.Server) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(srv.BaseURL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
	return &c
}

func anClient(srv *llmtest.Server) anthropic.Client {
	return anthropic.NewClient(anoption.WithBaseURL(srv.BaseURL()), anoption.WithAPIKey("k"), anoption.WithMaxRetries(0))
}

var toolReply = llmtest.Reply{Text: "let me look", Chunks: []string{"let ", "me look"}, ToolCalls: []llmtest.ToolCall{llmtest.Call("search", `{"q":"go"}`)}}

// The official Go client reads the Responses API replies, streamed and not,
// text and function calls, and sends a tool round trip the server decodes.
func TestResponsesWire(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Always(toolReply))
	defer srv.Close()
	c := oaClient(srv)
	ctx := context.Background()
	params := responses.ResponseNewParams{Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}
	res, err := c.Responses.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if res.OutputText() != "let me look" || len(res.Output) != 2 || res.Output[1].Name != "search" || res.Output[1].Arguments.OfString != `{"q":"go"}` {
		t.Fatalf("output %+v", res.Output)
	}
	st := c.Responses.NewStreaming(ctx, params)
	var text strings.Builder
	var done responses.Response
	for st.Next() {
		ev := st.Current()
		switch ev.Type {
		case "response.output_text.delta":
			text.WriteString(ev.Delta)
		case "response.completed":
			done = ev.Response
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if text.String() != "let me look" || done.Status != "completed" || done.ID != res.ID[:strings.LastIndex(res.ID, "_")]+"_2" {
		t.Fatalf("text %q, completed %s %s (first %s)", text.String(), done.Status, done.ID, res.ID)
	}
	// A tool round trip: the output is sent back with the call's id.
	round := params
	round.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("hi", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfFunctionCall(`{"q":"go"}`, "call_1", "search"),
		fcOutput("call_1", "found"),
	}}
	round.PreviousResponseID = openai.String(res.ID)
	if _, err := c.Responses.New(ctx, round); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[2]
	if r.Endpoint != "responses" || r.PreviousResponseID != res.ID || len(r.Messages) != 3 || r.Messages[1].ToolCalls[0].Name != "search" || r.Last().Content != "found" || r.Last().ToolCallID != "call_1" {
		t.Fatalf("decoded %+v", r)
	}
}

func fcOutput(id, out string) responses.ResponseInputItemUnionParam {
	p := responses.ResponseInputItemParamOfFunctionCallOutput(out)
	p.OfFunctionCallOutput.CallID = openai.String(id)
	return p
}

// Messages streaming with tool use, read by the official Go client.
func TestMessagesStream(t *testing.T) {
	srv := llmtest.NewAnthropic(llmtest.Always(toolReply))
	defer srv.Close()
	c := anClient(srv)
	st := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: "m", MaxTokens: 10, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	var msg anthropic.Message
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 2 || msg.Content[0].Text != "let me look" || msg.Content[1].Name != "search" || string(msg.Content[1].Input) != `{"q":"go"}` || msg.StopReason != "tool_use" {
		t.Fatalf("message %+v", msg)
	}
	n, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model: "m", Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello world!"))},
	})
	if err != nil || n.InputTokens != 3 {
		t.Fatalf("count_tokens %+v %v", n, err)
	}
	if got := srv.Requests()[1].Endpoint; got != "count_tokens" {
		t.Errorf("endpoint %q", got)
	}
}

// rawEvents posts body to path and returns the SSE event names received and
// the body's read error.
func rawEvents(t *testing.T, srv *llmtest.Server, path, body string) ([]string, string, error) {
	t.Helper()
	res, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	var names []string
	for _, line := range strings.Split(string(b), "\n") {
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			names = append(names, n)
		}
	}
	return names, string(b), err
}

const (
	anStream = `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
	rsStream = `{"model":"m","stream":true,"input":"hi"}`
)

// Every fault on both new wires: where the stream stops and how it ends.
func TestNewWireFaults(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
		kind             llmtest.StreamFaultKind
		at               int
		last             string // the last event's name
		contains         string
		cut              bool // the body ends with a read error
	}{
		{"messages cut after content", "/v1/messages", anStream, llmtest.StreamCut, 4, "content_block_delta", "", true},
		{"messages no end", "/v1/messages", anStream, llmtest.StreamNoEnd, 6, "content_block_stop", "", false},
		{"messages overloaded before content", "/v1/messages", anStream, llmtest.StreamOverloaded, 2, "error", `"overloaded_error"`, false},
		{"messages error", "/v1/messages", anStream, llmtest.StreamError, 4, "error", `"api_error"`, false},
		{"messages malformed", "/v1/messages", anStream, llmtest.StreamMalformed, 3, "message_stop", `"ind`, false},
		{"responses cut after content", "/v1/responses", rsStream, llmtest.StreamCut, 5, "response.output_text.delta", "", true},
		{"responses no end", "/v1/responses", rsStream, llmtest.StreamNoEnd, 9, "response.output_item.done", "", false},
		{"responses error", "/v1/responses", rsStream, llmtest.StreamError, 4, "error", `"server_error"`, false},
		{"responses overloaded", "/v1/responses", rsStream, llmtest.StreamOverloaded, 2, "error", `"overloaded_error"`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Streamed(tc.kind, tc.at, "a", "b")))
			if tc.path == "/v1/messages" {
				srv = llmtest.NewAnthropic(llmtest.Always(llmtest.Streamed(tc.kind, tc.at, "a", "b")))
			}
			defer srv.Close()
			names, body, err := rawEvents(t, srv, tc.path, tc.body)
			if (err != nil) != tc.cut {
				t.Errorf("read error %v, want cut %v", err, tc.cut)
			}
			if len(names) == 0 || names[len(names)-1] != tc.last || !strings.Contains(body, tc.contains) {
				t.Errorf("events %v, want last %s containing %s\n%s", names, tc.last, tc.contains, body)
			}
		})
	}
}

// The Anthropic client sees an overloaded_error event as an error.
func TestMessagesOverloadedEvent(t *testing.T) {
	srv := llmtest.NewAnthropic(llmtest.Always(llmtest.Streamed(llmtest.StreamOverloaded, 2, "x")))
	defer srv.Close()
	c := anClient(srv)
	st := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: "m", MaxTokens: 10, Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	})
	for st.Next() {
	}
	if st.Err() == nil || !strings.Contains(st.Err().Error(), "overloaded_error") {
		t.Fatalf("err %v", st.Err())
	}
}

func TestEmbeddings(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Reply{Usage: llmtest.Usage{InputTokens: 4}}))
	defer srv.Close()
	c := oaClient(srv)
	res, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{
		Model: "e", Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", "b", "a"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 3 || len(res.Data[0].Embedding) != llmtest.EmbeddingDims || res.Usage.PromptTokens != 4 {
		t.Fatalf("%+v", res)
	}
	if res.Data[0].Embedding[0] != res.Data[2].Embedding[0] || res.Data[0].Embedding[0] == res.Data[1].Embedding[0] {
		t.Errorf("vectors not deterministic per text")
	}
	// base64, as the Node client asks by default
	resp, _ := http.Post(srv.URL+"/v1/embeddings", "application/json", strings.NewReader(`{"model":"e","input":"a","encoding_format":"base64"}`))
	var out struct {
		Data []struct{ Embedding string } `json:"data"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if len(out.Data) != 1 || len(out.Data[0].Embedding) != 44 { // 32 bytes in base64
		t.Errorf("base64 %+v", out)
	}
	// errors of the wire
	srv2 := llmtest.NewOpenAI(llmtest.Always(llmtest.Error(500)))
	defer srv2.Close()
	_, err = oaClient(srv2).Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "e", Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String("a")}})
	var ae *openai.Error
	if !errors.As(err, &ae) || ae.StatusCode != 500 {
		t.Errorf("err %v", err)
	}
}
