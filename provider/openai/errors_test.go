package openai_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/openai"
	"github.com/loopctl/loopctl-go/retry"
)

// TestMapError classifies the errors of the bare openai-go client, as a user
// of the SDK would, through the exported mapping.
func TestMapError(t *testing.T) {
	tests := []struct {
		reply llmtest.Reply
		code  int
		class retry.Class
		after time.Duration
	}{
		{llmtest.Error(400), 400, retry.Permanent, 0},
		{llmtest.Error(401), 401, retry.Permanent, 0},
		{llmtest.Error(404), 404, retry.Permanent, 0},
		{llmtest.RateLimit("7"), 429, retry.RateLimited, 7 * time.Second},
		{llmtest.Error(500), 500, retry.Transient, 0},
		{llmtest.Error(503), 503, retry.Transient, 0},
		{llmtest.Malformed(), 0, retry.Transient, 0},
	}
	for _, tt := range tests {
		srv := llmtest.NewOpenAI(llmtest.Always(tt.reply))
		c := sdk.NewClient(option.WithBaseURL(srv.BaseURL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
		var raw *http.Response
		_, err := c.Chat.Completions.New(context.Background(), sdk.ChatCompletionNewParams{
			Model:    "m",
			Messages: []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("hi")},
		}, option.WithResponseInto(&raw))
		srv.Close()
		if err == nil {
			t.Fatalf("%d: no error", tt.code)
		}
		mapped := openai.MapError(context.Background(), err, raw, time.Time{})
		if got := retry.Classify(mapped); got != tt.class {
			t.Errorf("%d: class %v, want %v (%v)", tt.code, got, tt.class, mapped)
		}
		se := openai.StatusError(err)
		if tt.code == 0 {
			if se != nil {
				t.Errorf("StatusError of a 200: %v", se)
			}
			continue
		}
		if se == nil || se.Code != tt.code || se.RetryAfter != tt.after {
			t.Errorf("%d: StatusError %+v, want code %d, retry after %v", tt.code, se, tt.code, tt.after)
		}
	}
	if openai.MapError(context.Background(), nil, nil, time.Time{}) != nil || openai.StatusError(nil) != nil {
		t.Error("nil error mapped to an error")
	}
}
