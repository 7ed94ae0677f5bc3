package mcptool

import (
	"context"
	"sync"

	"golang.org/x/oauth2"
)

// persisting returns the token source of g's client starting from token t:
// refreshed by the oauth2 package when expired, and each new token written
// to the token file (with the refresh token the server may have rotated).
func (h *oauthHandler) persisting(g *storedGrant, t *oauth2.Token) oauth2.TokenSource {
	// The source outlives any one request: its refreshes use a context of
	// their own, carrying only the configured HTTP client.
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, h.opts.HTTPClient)
	return &savingSource{h: h, grant: g, src: g.config().TokenSource(ctx, t), last: t.AccessToken}
}

// savingSource stores every token its source returns that it has not seen.
type savingSource struct {
	h     *oauthHandler
	grant *storedGrant
	src   oauth2.TokenSource

	mu   sync.Mutex
	last string // the access token last seen
}

// Token returns a valid token, refreshing and storing it when needed. A token
// that cannot be stored is still returned (the call can go on); the failure
// is logged without the token.
func (s *savingSource) Token() (*oauth2.Token, error) {
	t, err := s.src.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if t.AccessToken == s.last {
		return t, nil
	}
	s.last = t.AccessToken
	g := *s.grant
	g.Token = t
	if err := s.h.file.save(&g); err != nil {
		s.h.opts.logger().Warn("mcp server token not stored", "server", s.h.opts.Server, "file", s.h.opts.TokenFile, "err", err)
		return t, nil
	}
	s.h.mu.Lock()
	s.h.grant = &g
	s.h.mu.Unlock()
	return t, nil
}
