package anthropic_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/loopctl/loopctl-go/llmtest"
	"github.com/loopctl/loopctl-go/provider/anthropic"
	"github.com/loopctl/loopctl-go/retry"
)

// TestMapError classifies the errors of the bare anthropic-sdk-go client, as a user
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
		srv := llmtest.NewAnthropic(llmtest.Always(tt.reply))
		c := sdk.NewClient(option.WithBaseURL(srv.BaseURL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
		var raw *http.Response
		_, err := c.Messages.New(context.Background(), sdk.MessageNewParams{
			Model:     "m",
			MaxTokens: 16,
			Messages:  []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("hi"))},
		}, option.WithResponseInto(&raw))
		srv.Close()
		if err == nil {
			t.Fatalf("%d: no error", tt.code)
		}
		mapped := anthropic.MapError(context.Background(), err, raw, time.Time{})
		if got := retry.Classify(mapped); got != tt.class {
			t.Errorf("%d: class %v, want %v (%v)", tt.code, got, tt.class, mapped)
		}
		se := anthropic.StatusError(err)
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
	if anthropic.MapError(context.Background(), nil, nil, time.Time{}) != nil || anthropic.StatusError(nil) != nil {
		t.Error("nil error mapped to an error")
	}
}
