package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/retry"
)

// ErrBadResponse is wrapped by the error of a 2xx response that cannot be
// understood: a body that is not JSON, or a completion without choices. The
// retry ladder treats it as transient.
var ErrBadResponse = errors.New("openai: malformed response")

// Config configures a [Provider]. The zero value talks to api.openai.com with
// the key in OPENAI_API_KEY.
type Config struct {
	// BaseURL is the API root, e.g. "http://localhost:8000/v1" for a vLLM
	// server. "": the SDK default (OPENAI_BASE_URL, else
	// https://api.openai.com/v1).
	BaseURL string

	// APIKey is sent as a bearer token. "": the SDK default (OPENAI_API_KEY);
	// local servers usually accept any value.
	APIKey string

	// HTTPClient sends the requests. nil: a new &http.Client{} with
	// http.DefaultTransport and no timeout (the context bounds each call).
	HTTPClient *http.Client

	// MaxTokens caps the answer when [agent.Request.MaxTokens] is 0.
	// 0: no cap is sent and the server decides.
	MaxTokens int

	// LegacyMaxTokens sends the cap as "max_tokens" instead of
	// "max_completion_tokens", for servers that only know the older name.
	// false: "max_completion_tokens".
	LegacyMaxTokens bool

	// Options are extra SDK request options (headers, organization, ...),
	// applied after the ones built from the fields above. The provider's own
	// "no SDK retries" and "no SDK timeout" options are applied last and win.
	// nil: none.
	Options []option.RequestOption

	// Now reads the clock for Retry-After HTTP-dates. nil: time.Now.
	Now func() time.Time
}

// Provider is an [agent.Provider] for the Chat Completions API. It is safe
// for concurrent use.
type Provider struct {
	client    sdk.Client
	maxTokens int
	legacy    bool
	now       func() time.Time
}

var _ agent.Provider = (*Provider)(nil)

// New returns a Provider for c. It makes no request.
func New(c Config) (*Provider, error) {
	if c.MaxTokens < 0 {
		return nil, fmt.Errorf("openai: MaxTokens must not be negative (got %d)", c.MaxTokens)
	}
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	opts := []option.RequestOption{option.WithHTTPClient(hc)}
	if c.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(c.BaseURL))
	}
	if c.APIKey != "" {
		opts = append(opts, option.WithAPIKey(c.APIKey))
	}
	opts = append(opts, c.Options...)
	opts = append(opts,
		option.WithMaxRetries(0),
		option.WithRequestTimeout(0),
	)
	now := c.Now
	if now == nil {
		now = time.Now
	}
	return &Provider{
		client:    sdk.NewClient(opts...),
		maxTokens: c.MaxTokens,
		legacy:    c.LegacyMaxTokens,
		now:       now,
	}, nil
}

// Complete sends req as one Chat Completions request and returns the first
// choice. It makes exactly one HTTP request.
func (p *Provider) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return agent.Response{}, retry.Unrecoverable(err)
	}
	var raw *http.Response
	res, err := p.client.Chat.Completions.New(ctx, params, option.WithResponseInto(&raw))
	if err != nil {
		return agent.Response{}, MapError(ctx, err, raw, p.now())
	}
	if res == nil || len(res.Choices) == 0 {
		return agent.Response{}, fmt.Errorf("%w: no choices", ErrBadResponse)
	}
	return response(res), nil
}

// errorStatus returns the "status" of an error object such as
// {"code":429,"message":"Quota exceeded ...","status":"RESOURCE_EXHAUSTED"}
// (Google's OpenAI-compatible endpoint), which says what kind of rate limit a
// 429 is (retry.LimitFor); "" if there is none.
func errorStatus(raw string) string {
	var e struct {
		Status string `json:"status"`
	}
	if raw == "" || json.Unmarshal([]byte(raw), &e) != nil {
		return ""
	}
	return e.Status
}
