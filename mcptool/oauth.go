package mcptool

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// ErrLoginRequired matches every [*LoginRequiredError].
var ErrLoginRequired = errors.New("mcptool: OAuth login required")

// LoginRequiredError is an OAuth-protected server for which no usable token
// is stored: a person has to authorize once (`loopctl mcp-proxy login`).
type LoginRequiredError struct {
	Server string // the upstream's name
	Reason string // why the stored token, if any, does not do
}

// Error names the server and the command that fixes it.
func (e *LoginRequiredError) Error() string {
	return fmt.Sprintf("mcp server %q needs authorization (%s): run `loopctl mcp-proxy login %s`", e.Server, e.Reason, e.Server)
}

// Is reports whether target is ErrLoginRequired.
func (e *LoginRequiredError) Is(target error) bool { return target == ErrLoginRequired }

// OAuthOptions configures [NewOAuthHandler]: the client side of MCP
// authorization toward one HTTP server.
type OAuthOptions struct {
	// Server is the upstream's name, for errors.
	Server string
	// ClientID and ClientSecret are a client registered beforehand with the
	// server's authorization server. ClientID "": the client registers itself
	// (RFC 7591) when it authorizes.
	ClientID, ClientSecret string
	// Scopes replace the scopes the server asks for. nil: the server's.
	Scopes []string
	// TokenFile keeps the token, the client registration and the token
	// endpoint, so a token is refreshed after a restart. Required.
	TokenFile string
	// RedirectURL is where the authorization server sends the browser back
	// (a loopback URL the caller listens on). Needed only with Authorize.
	RedirectURL string
	// Authorize is the interactive step: it has a person open args.URL and
	// returns the code the redirect carried. nil: no person is there; a
	// server that wants a new authorization fails with a [*LoginRequiredError].
	Authorize auth.AuthorizationCodeFetcher
	// HTTPClient makes the requests to the authorization server. nil:
	// http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives a Warn record when a refreshed token cannot be stored
	// (never the token). nil: none.
	Logger *slog.Logger
}

// logger is o.Logger, or one that discards.
func (o OAuthOptions) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// NewOAuthHandler returns the OAuth handler of one server's streamable HTTP
// transport ([StreamableHTTPAuth]). It sends the stored token (refreshed
// when expired, the new one stored), answers a 401 first by refreshing, then
// by a token the file got since (a login while it runs), then by a new
// authorization (protected-resource metadata, authorization-server
// metadata, dynamic client registration or opts.ClientID, PKCE S256)
// through opts.Authorize. Without opts.Authorize it reads the token file and
// refuses a file that group or others may read ([ErrTokenFileInsecure]).
// Tokens are never logged nor put in an error.
func NewOAuthHandler(opts OAuthOptions) (auth.OAuthHandler, error) {
	if opts.TokenFile == "" {
		return nil, errors.New("mcptool: OAuthOptions.TokenFile is required")
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = http.DefaultClient
	}
	h := &oauthHandler{opts: opts, file: tokenFile{path: opts.TokenFile}}
	if opts.Authorize == nil {
		g, err := h.file.load()
		if err != nil {
			return nil, err
		}
		if g != nil {
			h.grant = g
			h.ts = h.persisting(g, g.Token)
		}
		return h, nil
	}
	inner, err := auth.NewAuthorizationCodeHandler(h.codeConfig())
	if err != nil {
		return nil, fmt.Errorf("mcptool: OAuth for %q: %w", opts.Server, err)
	}
	h.inner = inner
	return h, nil
}

// StreamableHTTPAuth is [StreamableHTTP] with the OAuth handler h (from
// [NewOAuthHandler]) authorizing its requests.
func StreamableHTTPAuth(url string, client *http.Client, h auth.OAuthHandler) func(context.Context) (mcp.Transport, error) {
	return func(context.Context) (mcp.Transport, error) {
		return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client, OAuthHandler: h}, nil
	}
}

// oauthHandler is the handler of one server. Its token source stores every
// new token in the file; a 401 is answered by one refresh, then by the
// authorization code flow of inner (interactive only).
type oauthHandler struct {
	opts  OAuthOptions
	file  tokenFile
	inner *auth.AuthorizationCodeHandler // nil: not interactive

	mu        sync.Mutex
	grant     *storedGrant       // what the file holds; nil: nothing yet
	ts        oauth2.TokenSource // the current token's source; nil: none
	refreshAt time.Time          // when a 401 was last answered by a refresh
}

// refreshEvery bounds the refreshes a server's 401s cause: a server that
// refuses a freshly refreshed token needs a new authorization, not another
// refresh per request.
const refreshEvery = time.Minute

// codeConfig is the SDK's authorization code flow configured from h.opts.
func (h *oauthHandler) codeConfig() *auth.AuthorizationCodeHandlerConfig {
	o := h.opts
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              o.RedirectURL,
		AuthorizationCodeFetcher: o.Authorize,
		RequestRefreshToken:      true,
		Client:                   o.HTTPClient,
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			return h.adopt(c, t)
		},
	}
	if o.Scopes != nil {
		cfg.ScopeFilter = func([]string) []string { return o.Scopes }
	}
	if o.ClientID != "" {
		cred := &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			cred.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
		cfg.PreregisteredClient = cred
		return cfg
	}
	cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
		Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{o.RedirectURL},
			ClientName:              "loopctl mcp-proxy",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		},
	}
	return cfg
}

// adopt stores a token the authorization code flow obtained, with the client
// registration and token endpoint of c, and makes it the current one.
func (h *oauthHandler) adopt(c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
	g := &storedGrant{Server: h.opts.Server, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		TokenURL: c.Endpoint.TokenURL, AuthStyle: c.Endpoint.AuthStyle, Token: t}
	if err := h.file.save(g); err != nil {
		return nil, fmt.Errorf("mcptool: storing the token of %q: %w", h.opts.Server, err)
	}
	ts := h.persisting(g, t)
	h.mu.Lock()
	h.grant, h.ts, h.refreshAt = g, ts, time.Time{}
	h.mu.Unlock()
	return ts, nil
}

// TokenSource returns the current token's source (nil before any token).
func (h *oauthHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

// Authorize answers a 401 or 403 of the server: first by refreshing the
// stored token (the server may have revoked one that had not expired yet),
// then by the authorization code flow, which needs a person.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	refused := resp.StatusCode == http.StatusUnauthorized
	if refused && h.refresh() {
		resp.Body.Close()
		return nil
	}
	if h.inner == nil {
		resp.Body.Close()
		return h.reload()
	}
	return h.inner.Authorize(ctx, req, resp)
}

// reload adopts the token file's grant when it holds a token h has not
// used (a login since h started), else returns the *LoginRequiredError
// that says to log in. A file that cannot be used is an error too.
func (h *oauthHandler) reload() error {
	g, err := h.file.load()
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if g != nil && (h.grant == nil || g.Token.AccessToken != h.grant.Token.AccessToken) {
		h.grant, h.ts, h.refreshAt = g, h.persisting(g, g.Token), time.Time{}
		return nil
	}
	reason := "no token stored in " + h.opts.TokenFile
	if h.grant != nil {
		reason = "the server refused the stored token and its refresh"
	}
	return &LoginRequiredError{Server: h.opts.Server, Reason: reason}
}

// refresh replaces the current token by a refreshed one (stored), at most
// once per refreshEvery, and reports whether it got one.
func (h *oauthHandler) refresh() bool {
	h.mu.Lock()
	g := h.grant
	if g == nil || g.Token.RefreshToken == "" || time.Since(h.refreshAt) < refreshEvery {
		h.mu.Unlock()
		return false
	}
	h.refreshAt = time.Now()
	expired := *g.Token
	expired.Expiry = time.Unix(1, 0)
	ts := h.persisting(g, &expired)
	h.mu.Unlock()
	if _, err := ts.Token(); err != nil {
		return false
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return true
}
