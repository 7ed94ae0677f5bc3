package transport_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/retry"
	"github.com/loopctl/loopctl-go/transport"
)

// The openai-go client, unchanged but for its HTTP client: two 503s are
// retried by the ladder and the caller sees the answer.
func Example_openai() {
	srv := llmtest.NewOpenAI(llmtest.Sequence(
		llmtest.Error(503), llmtest.Error(503), llmtest.Text("pong"),
	))
	defer srv.Close()

	rt, err := transport.New(transport.Settings{
		Retry: retry.Policy{BaseDelay: 1, MaxDelay: 1}, // keep the example fast
	})
	if err != nil {
		panic(err)
	}
	client := openai.NewClient(
		option.WithBaseURL(srv.BaseURL()), // e.g. https://api.openai.com/v1
		option.WithAPIKey("sk-test"),
		option.WithHTTPClient(&http.Client{Transport: rt}),
		option.WithMaxRetries(0), // the ladder retries, not the SDK
	)
	res, err := client.Chat.Completions.New(context.Background(), openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("ping")},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Choices[0].Message.Content, "after", srv.Count("gpt-4o-mini"), "requests")
	// Output:
	// pong after 3 requests
}

// The anthropic-sdk-go client during an outage, with one breaker per host
// and model (the model is in the body, so the caller names it in a header):
// after three failed requests the breaker refuses at once, with a soft,
// typed error that says when the next probe may go.
func Example_anthropic() {
	srv := llmtest.NewAnthropic(llmtest.Always(llmtest.Error(529)))
	defer srv.Close()

	rt, err := transport.New(transport.Settings{
		Key: func(r *http.Request) string {
			return r.URL.Host + " " + r.Header.Get("X-Model")
		},
		Breaker: breaker.Settings{OnStateChange: func(key string, from, to breaker.State) {
			fmt.Println(strings.Fields(key)[1], from, "->", to)
		}},
		Retry: retry.Policy{MaxRetries: -1}, // no retries: show the breaker alone
	})
	if err != nil {
		panic(err)
	}
	client := anthropic.NewClient(
		anthropicoption.WithBaseURL(srv.BaseURL()),
		anthropicoption.WithAPIKey("sk-ant-test"),
		anthropicoption.WithHTTPClient(&http.Client{Transport: rt}),
		anthropicoption.WithMaxRetries(0),
		anthropicoption.WithHeader("X-Model", "claude-test"),
	)
	for range 4 {
		_, err := client.Messages.New(context.Background(), anthropic.MessageNewParams{
			Model:     "claude-test",
			MaxTokens: 64,
			Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("ping"))},
		})
		var apiErr *anthropic.Error
		var open *transport.OpenError
		switch {
		case errors.As(err, &apiErr):
			fmt.Println("HTTP", apiErr.StatusCode)
		case errors.As(err, &open):
			fmt.Println("refused:", errors.Is(err, breaker.ErrOpen), open.RetryIn() > 0)
		}
	}
	fmt.Println(srv.Count("claude-test"), "requests sent")
	// Output:
	// HTTP 529
	// HTTP 529
	// claude-test closed -> open
	// HTTP 529
	// refused: true true
	// 3 requests sent
}

// The middleware of the library guide (docs/library.md): the default
// breaker per host and the default ladder under the openai-go client.
func ExampleNew() {
	srv := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("pong")))
	defer srv.Close()
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("ping")},
	}
	run := func() error {
		rt, err := transport.New(transport.Settings{}) // per host, default breaker and ladder
		if err != nil {
			return err
		}
		client := openai.NewClient(
			option.WithBaseURL(srv.BaseURL()), // the example's server; default: OPENAI_BASE_URL or api.openai.com
			option.WithAPIKey("sk-test"),
			option.WithHTTPClient(&http.Client{Transport: rt}),
			option.WithMaxRetries(0), // the ladder retries, not the SDK
		)
		_, err = client.Chat.Completions.New(ctx, params)
		if errors.Is(err, breaker.ErrOpen) {
			// the host is down: nothing was sent; fail over or wait (errors.As: *transport.OpenError)
		}
		return err
	}
	fmt.Println(run(), srv.Count("gpt-4o-mini"))
	// Output: <nil> 1
}
