// Package oauthtest provides a fake OAuth 2.1 authorization server and an
// MCP server it protects, on loopback httptest servers, for the tests of the
// MCP proxy's OAuth client: metadata (RFC 9728, RFC 8414), dynamic client
// registration (RFC 7591), the authorization code grant with PKCE S256
// (verified), refresh tokens (rotated) and revocation.
package oauthtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is the fake: an authorization server (AS) and an MCP server at
// MCPURL that accepts only the access tokens the AS issued and not revoked.
type Server struct {
	AS, RS *httptest.Server
	// MCPURL is the protected MCP endpoint.
	MCPURL string
	srv    *mcp.Server

	mu       sync.Mutex
	n        int                  // tokens and codes issued
	clients  map[string]string    // client_id → redirect_uri
	codes    map[string]codeGrant // code → its grant
	access   map[string]bool      // valid access tokens
	refresh  map[string]bool      // valid refresh tokens
	counts   map[string]int       // "register", "authorize", "code", "refresh", "401"
	problems []string             // what a client did wrong
}

// codeGrant is what an authorization request bound a code to.
type codeGrant struct{ client, redirect, challenge string }

// New starts the fake with an MCP server serving srv (nil: an empty one).
// Close it with Close.
func New(srv *mcp.Server) *Server {
	if srv == nil {
		srv = mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	}
	s := &Server{clients: map[string]string{}, codes: map[string]codeGrant{}, access: map[string]bool{},
		refresh: map[string]bool{}, counts: map[string]int{}, srv: srv}
	s.AS = httptest.NewServer(s.asMux())
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	rs := http.NewServeMux()
	rs.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": s.MCPURL, "authorization_servers": []string{s.AS.URL},
			"scopes_supported": []string{"mcp"}})
	})
	rs.Handle("/mcp", s.protect(mcpHandler))
	s.RS = httptest.NewServer(rs)
	s.MCPURL = s.RS.URL + "/mcp"
	return s
}

// Close stops both servers and ends the MCP server's sessions (a client
// whose token was revoked cannot end its own).
func (s *Server) Close() {
	for ss := range s.srv.Sessions() {
		ss.Close()
	}
	s.RS.Close()
	s.AS.Close()
}

// Count returns how many times the fake saw event ("register", "authorize",
// "code", "refresh", "401").
func (s *Server) Count(event string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[event]
}

// Problems returns what clients did wrong (a bad PKCE verifier, an unknown
// client...), in order.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

// RevokeAccess makes every access token issued so far invalid (their
// refresh tokens stay valid).
func (s *Server) RevokeAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
}

// RevokeAll makes every token issued so far invalid.
func (s *Server) RevokeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.access)
	clear(s.refresh)
}

// protect answers 401 with the RFC 9728 challenge unless the request bears a
// valid access token.
func (s *Server) protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		valid := ok && s.access[tok]
		if !valid {
			s.counts["401"]++
		}
		s.mu.Unlock()
		if !valid {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata=%q, scope="mcp"`,
				s.RS.URL+"/.well-known/oauth-protected-resource/mcp"))
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// asMux is the authorization server: metadata, registration, authorization
// and token endpoints.
func (s *Server) asMux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		u := s.AS.URL
		writeJSON(w, map[string]any{"issuer": u, "authorization_endpoint": u + "/authorize",
			"token_endpoint": u + "/token", "registration_endpoint": u + "/register",
			"response_types_supported": []string{"code"}, "code_challenge_methods_supported": []string{"S256"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"token_endpoint_auth_methods_supported": []string{"none"}, "scopes_supported": []string{"mcp", "offline_access"}})
	})
	m.HandleFunc("POST /register", s.register)
	m.HandleFunc("GET /authorize", s.authorize)
	m.HandleFunc("POST /token", s.token)
	return m
}

// register is RFC 7591: a new public client for the first redirect URI.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var md struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&md); err != nil || len(md.RedirectURIs) == 0 {
		http.Error(w, `{"error":"invalid_client_metadata"}`, http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.counts["register"]++
	s.n++
	id := fmt.Sprintf("client-%d", s.n)
	s.clients[id] = md.RedirectURIs[0]
	s.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
	writeJSON(w, map[string]any{"client_id": id, "redirect_uris": md.RedirectURIs, "token_endpoint_auth_method": "none"})
}

// authorize approves at once (the person said yes): it redirects to the
// client's redirect URI with a code bound to the PKCE challenge.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts["authorize"]++
	redirect, known := s.clients[q.Get("client_id")]
	switch {
	case !known || redirect != q.Get("redirect_uri"):
		s.problems = append(s.problems, "authorize: unknown client or redirect_uri")
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		s.problems = append(s.problems, "authorize: no PKCE S256 challenge")
	case q.Get("response_type") != "code" || q.Get("resource") != s.MCPURL:
		s.problems = append(s.problems, "authorize: response_type or resource wrong")
	default:
		s.n++
		code := fmt.Sprintf("code-%d", s.n)
		s.codes[code] = codeGrant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
		to, _ := url.Parse(redirect)
		v := to.Query()
		v.Set("code", code)
		v.Set("state", q.Get("state"))
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
		return
	}
	http.Error(w, "bad authorization request", http.StatusBadRequest)
}

// token is the token endpoint: authorization_code (PKCE verified) and
// refresh_token (rotated).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
		return
	}
	f := r.PostForm
	s.mu.Lock()
	defer s.mu.Unlock()
	switch f.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code"))
		sum := sha256.Sum256([]byte(f.Get("code_verifier")))
		switch {
		case !ok || g.client != f.Get("client_id") || g.redirect != f.Get("redirect_uri"):
			s.problems = append(s.problems, "token: code, client_id or redirect_uri wrong")
		case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
			s.problems = append(s.problems, "token: PKCE verifier does not match the challenge")
		default:
			s.counts["code"]++
			s.issue(w)
			return
		}
	case "refresh_token":
		if s.refresh[f.Get("refresh_token")] {
			delete(s.refresh, f.Get("refresh_token"))
			s.counts["refresh"]++
			s.issue(w)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	w.Write([]byte(`{"error":"invalid_grant"}`))
}

// issue answers a token request with a new access and refresh token. s.mu
// is held.
func (s *Server) issue(w http.ResponseWriter) {
	s.n++
	at, rt := fmt.Sprintf("%s%d", AccessPrefix, s.n), fmt.Sprintf("%s%d", RefreshPrefix, s.n)
	s.access[at], s.refresh[rt] = true, true
	writeJSON(w, map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": 3600,
		"refresh_token": rt, "scope": "mcp"})
}

// AccessPrefix and RefreshPrefix begin every token the fake issues, for a
// test to look for in logs and errors.
const (
	AccessPrefix  = "access-secret-"
	RefreshPrefix = "refresh-secret-"
)

// Approve plays the browser up to the redirect: it opens authURL and returns
// the query of the redirect the authorization server answers with (code and
// state), without following it.
func Approve(ctx context.Context, authURL string) (url.Values, error) {
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return nil, fmt.Errorf("oauthtest: authorize answered %s", resp.Status)
	}
	to, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, err
	}
	return to.Query(), nil
}

// Visit plays the whole browser: it opens authURL and follows the redirect
// to the client's redirect URI, returning that page's status.
func Visit(ctx context.Context, authURL string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
