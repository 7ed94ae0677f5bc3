package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loopctl/loopctl-go/llmtest"
)

// crossFix is a gateway whose models' chains cross wires: upstreams "up"
// (openai, chat and responses), "chat" (openai, chat only) and "an"
// (anthropic), all answering one script by model.
type crossFix struct {
	wfix
	chatOnly *llmtest.Server
}

// crossModels: cc is Claude Code's model (an Anthropic primary that is
// overloaded, an OpenAI backup); oa an OpenAI client's (an OpenAI primary
// failing, a Claude backup); codex a Responses client's with a chat-only
// backup.
func crossModels() []Model {
	return []Model{
		{Name: "cc", Primary: "an/down529", Chain: []string{"up/tools"}},
		{Name: "oa", Primary: "up/down500", Chain: []string{"an/tools"}},
		{Name: "codex", Primary: "up/down500", Chain: []string{"chat/tools"}},
		{Name: "embed", Primary: "an/tools"},
	}
}

// toolScript is the healthy backup: a tool call when tools are offered and
// the last turn is not a tool result, text otherwise; usage with cached
// tokens.
func toolScript(r llmtest.Request) llmtest.Reply {
	use := llmtest.Usage{InputTokens: 10, OutputTokens: 5, CachedTokens: 20}
	if len(r.Tools) > 0 && r.Last().Role != "tool" {
		rep := llmtest.Calls(llmtest.Call(r.Tools[0].Name, `{"city":"Paris"}`))
		rep.Usage = use
		return rep
	}
	rep := llmtest.Chunked("sunny ", "in Paris")
	rep.Usage = use
	return rep
}

func newCross(t *testing.T, extra map[string]llmtest.Script) *crossFix {
	t.Helper()
	scripts := map[string]llmtest.Script{
		"down529": llmtest.Always(llmtest.Error(529)),
		"down500": llmtest.Always(llmtest.Error(500)),
		"tools":   toolScript,
	}
	for k, v := range extra {
		scripts[k] = v
	}
	s := llmtest.ByModel(scripts)
	f := &crossFix{wfix: wfix{t: t, oa: llmtest.NewOpenAI(s), an: llmtest.NewAnthropic(s)}, chatOnly: llmtest.NewOpenAI(s)}
	cfg := Config{Models: crossModels(), Retry: Retry{MaxRetries: -1}, Upstreams: []Upstream{
		{Name: "up", BaseURL: f.oa.BaseURL(), APIKey: "sk-up"},
		{Name: "chat", BaseURL: f.chatOnly.BaseURL(), APIKey: "sk-chat", Wires: []string{"chat"}},
		{Name: "an", API: APIAnthropic, BaseURL: f.an.BaseURL(), APIKey: "sk-an"},
	}}
	gw, err := New(cfg, Options{Rand: func() float64 { return 0 }})
	if err != nil {
		t.Fatal(err)
	}
	f.gw, f.srv = gw, httptest.NewServer(gw)
	t.Cleanup(func() { f.srv.Close(); gw.Close(); f.oa.Close(); f.an.Close(); f.chatOnly.Close() })
	return f
}

const weatherTool = `[{"name":"get_weather","description":"the weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}}}]`

// Claude Code's wire served by an OpenAI backup: the Anthropic SDK reads a
// tool call, then the final text, with usage in Anthropic's arithmetic.
func TestCrossMessagesServedByChat(t *testing.T) {
	f := newCross(t, nil)
	client := anthropic.NewClient(anoption.WithBaseURL(f.srv.URL), anoption.WithAPIKey("k"), anoption.WithMaxRetries(0))
	var tools []anthropic.ToolUnionParam
	if err := json.Unmarshal([]byte(weatherTool), &tools); err != nil {
		t.Fatal(err)
	}
	params := anthropic.MessageNewParams{Model: "cc", MaxTokens: 100, Tools: tools,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("weather in Paris?"))}}
	var hdr http.Header
	msg, err := client.Messages.New(context.Background(), params, anoption.WithResponseInto(new(*http.Response)), anoption.WithMiddleware(keepHeader(&hdr)))
	if err != nil {
		t.Fatal(err)
	}
	if msg.StopReason != anthropic.StopReasonToolUse || len(msg.Content) != 1 || msg.Content[0].Name != "get_weather" || string(msg.Content[0].Input) != `{"city":"Paris"}` {
		t.Fatalf("tool call: %+v", msg)
	}
	if msg.Usage.InputTokens != 10 || msg.Usage.CacheReadInputTokens != 20 || msg.Usage.OutputTokens != 5 {
		t.Errorf("usage %+v, want input 10 (prompt 30 minus 20 cached), cache read 20, output 5", msg.Usage)
	}
	if got := hdr.Get("X-Loopctl-Translated"); got != "messages->chat" || hdr.Get("X-Loopctl-Model") != "up/tools" {
		t.Errorf("x-loopctl-translated %q, model %q", got, hdr.Get("X-Loopctl-Model"))
	}
	// The round trip: the tool's result goes back, streamed this time.
	params.Messages = append(params.Messages, msg.ToParam(),
		anthropic.NewUserMessage(anthropic.NewToolResultBlock(msg.Content[0].ID, "18C and sunny", false)))
	stream := client.Messages.NewStreaming(context.Background(), params, anoption.WithHeader("anthropic-beta", "tools-2025"))
	var acc anthropic.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if acc.StopReason != anthropic.StopReasonEndTurn || len(acc.Content) != 1 || acc.Content[0].Text != "sunny in Paris" {
		t.Fatalf("streamed answer %+v", acc)
	}
	last := f.oa.Requests()[len(f.oa.Requests())-1]
	if h := last.Header; h.Get("Anthropic-Version") != "" || h.Get("Anthropic-Beta") != "" {
		t.Errorf("anthropic headers reached the openai backup: %v", h)
	}
	if m := last.Messages; len(m) != 3 || m[1].ToolCalls[0].ID != m[2].ToolCallID || m[2].Content != "18C and sunny" {
		t.Errorf("the backup's history %+v: the call and its result must pair", m)
	}
	if n := testutil.ToFloat64(f.gw.m.translations.WithLabelValues("messages", "chat")); n != 2 {
		t.Errorf("translations_total{messages,chat} = %v", n)
	}
}

// keepHeader is SDK middleware that keeps the last response's headers.
func keepHeader(h *http.Header) anoption.Middleware {
	return func(r *http.Request, next anoption.MiddlewareNext) (*http.Response, error) {
		res, err := next(r)
		if res != nil {
			*h = res.Header
		}
		return res, err
	}
}

// An OpenAI client served by Claude: chat completions (whole and
// streamed) and the Responses API, each with a tool call.
func TestCrossOpenAIServedByMessages(t *testing.T) {
	f := newCross(t, nil)
	client := openai.NewClient(option.WithBaseURL(f.srv.URL+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	tool := openai.ChatCompletionFunctionTool(openai.FunctionDefinitionParam{Name: "get_weather",
		Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}})
	params := openai.ChatCompletionNewParams{Model: "oa", Tools: []openai.ChatCompletionToolUnionParam{tool},
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather in Paris?")}}
	cc, err := client.Chat.Completions.New(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	ch := cc.Choices[0]
	if ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 || ch.Message.ToolCalls[0].Function.Name != "get_weather" ||
		ch.Message.ToolCalls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("chat tool call: %+v", ch)
	}
	if cc.Usage.PromptTokens != 30 || cc.Usage.PromptTokensDetails.CachedTokens != 20 || cc.Usage.CompletionTokens != 5 || cc.Usage.TotalTokens != 35 {
		t.Errorf("usage %+v, want prompt 30 (10 + 20 cached), cached 20, completion 5", cc.Usage)
	}
	params.Messages = append(params.Messages, ch.Message.ToParam(), openai.ToolMessage("18C and sunny", ch.Message.ToolCalls[0].ID))
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Chat.Completions.NewStreaming(context.Background(), params)
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != "sunny in Paris" || acc.Choices[0].FinishReason != "stop" || acc.Usage.PromptTokens != 30 {
		t.Fatalf("streamed chat %+v", acc.ChatCompletion)
	}
	resp, err := client.Responses.New(context.Background(), responses.ResponseNewParams{Model: "oa",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hello")}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.OutputText() != "sunny in Paris" || resp.Status != "completed" || resp.Usage.InputTokens != 30 || !strings.HasPrefix(resp.ID, "resp_") {
		t.Fatalf("responses %+v", resp)
	}
	for _, ft := range [][2]string{{"chat", "messages"}, {"responses", "messages"}} {
		if n := testutil.ToFloat64(f.gw.m.translations.WithLabelValues(ft[0], ft[1])); n < 1 {
			t.Errorf("translations_total{%s,%s} = %v", ft[0], ft[1], n)
		}
	}
}

// Codex's wire served by a chat-only backup, streamed: every event decodes
// and the completed response holds the call.
func TestCrossResponsesServedByChatOnly(t *testing.T) {
	f := newCross(t, nil)
	client := openai.NewClient(option.WithBaseURL(f.srv.URL+"/v1"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	params := responses.ResponseNewParams{Model: "codex", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("weather?")},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{Name: "get_weather",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}}}}}
	stream := client.Responses.NewStreaming(context.Background(), params)
	var done *responses.Response
	seq := int64(-1)
	for stream.Next() {
		ev := stream.Current()
		if ev.SequenceNumber <= seq {
			t.Errorf("sequence_number %d after %d", ev.SequenceNumber, seq)
		}
		seq = ev.SequenceNumber
		if ev.Type == "response.completed" {
			r := ev.Response
			done = &r
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if done == nil || len(done.Output) != 1 || done.Output[0].Type != "function_call" || done.Output[0].Name != "get_weather" || done.Output[0].Arguments.OfString != `{"city":"Paris"}` {
		t.Fatalf("completed %+v", done)
	}
	if f.chatOnly.Count("tools") != 1 || f.oa.Count("tools") != 0 {
		t.Errorf("the chat-only backup got %d, the other %d", f.chatOnly.Count("tools"), f.oa.Count("tools"))
	}
}

// Every model is served on the three wires; embeddings only by an openai
// entry: a model with none answers 404 as before.
func TestCrossEmbeddingsNeedAnOpenAIEntry(t *testing.T) {
	f := newCross(t, nil)
	a := f.do("/v1/embeddings", `{"model":"embed","input":"x"}`)
	if a.status != 404 || a.errorField("code") != "model_not_found" || !strings.Contains(a.body, "openai") {
		t.Errorf("embeddings on an anthropic-only model: %d %s", a.status, a.body)
	}
	if a := f.do("/v1/embeddings", `{"model":"oa","input":"x"}`); a.status != 502 {
		t.Errorf("embeddings on oa (its openai primary fails, its anthropic backup is skipped): %d %s", a.status, a.body)
	}
}
