package anthropic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/retry"
)

// DefaultMaxTokens is the answer cap sent when neither [agent.Request.MaxTokens]
// nor [Config.MaxTokens] is set: the API requires one, and every current
// Claude model can produce 4096 output tokens.
const DefaultMaxTokens = 4096

// ErrBadResponse is wrapped by the error of a 2xx response that cannot be
// understood: a body that is not JSON, or a message without content. The
// retry ladder treats it as transient.
var ErrBadResponse = errors.New("anthropic: malformed response")

// Config configures a [Provider]. The zero value talks to api.anthropic.com
// with the SDK's default credentials (ANTHROPIC_API_KEY, ...).
type Config struct {
	// BaseURL is the API root (the SDK appends "v1/messages").
	// "": the SDK default (ANTHROPIC_BASE_URL, else https://api.anthropic.com).
	BaseURL string

	// APIKey is the API key the SDK sends. "": the SDK's default credential
	// chain (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, profiles).
	APIKey string

	// HTTPClient sends the requests. nil: a new &http.Client{} with
	// http.DefaultTransport and no timeout (the context bounds each call).
	HTTPClient *http.Client

	// MaxTokens caps the answer when [agent.Request.MaxTokens] is 0.
	// 0: [DefaultMaxTokens] (4096).
	MaxTokens int

	// Options are extra SDK request options (headers, beta flags, ...),
	// applied after the ones built from the fields above. The provider's own
	// "no SDK retries" and "no SDK timeout" options are applied last and win.
	// nil: none.
	Options []option.RequestOption

	// Now reads the clock for Retry-After HTTP-dates. nil: time.Now.
	Now func() time.Time
}

// Provider is an [agent.Provider] for the Messages API. It is safe for
// concurrent use.
type Provider struct {
	client    sdk.Client
	maxTokens int
	now       func() time.Time
}

var _ agent.Provider = (*Provider)(nil)

// noTimeout stands in for "no timeout": the SDK otherwise picks a 10-minute
// request timeout (and refuses large MaxTokens without streaming).
const noTimeout = time.Duration(math.MaxInt64)

// New returns a Provider for c. It makes no request.
func New(c Config) (*Provider, error) {
	if c.MaxTokens < 0 {
		return nil, fmt.Errorf("anthropic: MaxTokens must not be negative (got %d)", c.MaxTokens)
	}
	maxTokens := c.MaxTokens
	if maxTokens == 0 {
		maxTokens = DefaultMaxTokens
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
		option.WithRequestTimeout(noTimeout),
	)
	now := c.Now
	if now == nil {
		now = time.Now
	}
	return &Provider{client: sdk.NewClient(opts...), maxTokens: maxTokens, now: now}, nil
}

// Complete sends req as one Messages request. It makes exactly one HTTP
// request.
func (p *Provider) Complete(ctx context.Context, req agent.Request) (agent.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return agent.Response{}, retry.Unrecoverable(err)
	}
	var raw *http.Response
	res, err := p.client.Messages.New(ctx, params, option.WithResponseInto(&raw))
	if err != nil {
		return agent.Response{}, MapError(ctx, err, raw, p.now())
	}
	if res == nil || !res.JSON.Content.Valid() {
		return agent.Response{}, fmt.Errorf("%w: no content", ErrBadResponse)
	}
	return response(res), nil
}
