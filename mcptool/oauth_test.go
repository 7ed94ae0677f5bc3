package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/internal/oauthtest"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// approve is an interactive step that plays a browser whose user says yes.
func approve(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	q, err := oauthtest.Approve(ctx, args.URL)
	if err != nil {
		return nil, err
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state")}, nil
}

// connectOAuth opens a session to the fake's MCP server through h.
func connectOAuth(ctx context.Context, fake *oauthtest.Server, h auth.OAuthHandler) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	t, _ := StreamableHTTPAuth(fake.MCPURL, nil, h)(ctx)
	return c.Connect(ctx, t, nil)
}

// login runs the interactive flow once and returns the token file.
func login(t *testing.T, ctx context.Context, fake *oauthtest.Server) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "sub", "protected.json")
	h, err := NewOAuthHandler(OAuthOptions{Server: "protected", TokenFile: file,
		RedirectURL: "http://127.0.0.1:1/callback", Authorize: approve})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := connectOAuth(ctx, fake, h)
	if err != nil {
		t.Fatalf("interactive connect: %v", err)
	}
	cs.Close()
	return file
}

// The interactive flow discovers the metadata, registers a client, sends a
// PKCE S256 challenge the fake verifies, exchanges the code and stores the
// token, the registration and the token endpoint in a file of mode 0600.
func TestOAuthLoginStoresGrant(t *testing.T) {
	fake := oauthtest.New(nil)
	defer fake.Close()
	file := login(t, context.Background(), fake)
	if p := fake.Problems(); len(p) > 0 {
		t.Fatalf("the fake saw: %v", p)
	}
	if fake.Count("register") != 1 || fake.Count("code") != 1 {
		t.Fatalf("register %d, code %d: want 1 each", fake.Count("register"), fake.Count("code"))
	}
	st, err := os.Stat(file)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v", err, st.Mode())
	}
	g, err := tokenFile{path: file}.load()
	if err != nil || g.ClientID != "client-1" || g.TokenURL != fake.AS.URL+"/token" ||
		!strings.HasPrefix(g.Token.RefreshToken, oauthtest.RefreshPrefix) {
		t.Fatalf("stored grant %+v, %v", g, err)
	}
}

// A restarted client (no person there) uses the stored token, refreshes it
// when it has expired or the server refuses it (each new token stored), and
// needs a login only when the refresh is refused too: an error naming the
// command, without trying to register or authorize.
func TestOAuthServeWithStoredToken(t *testing.T) {
	ctx := context.Background()
	fake := oauthtest.New(nil)
	defer fake.Close()
	file := login(t, ctx, fake)
	serve := func() (*mcp.ClientSession, error) {
		h, err := NewOAuthHandler(OAuthOptions{Server: "protected", TokenFile: file})
		if err != nil {
			t.Fatal(err)
		}
		return connectOAuth(ctx, fake, h)
	}
	steps := []struct {
		name        string
		before      func()
		wantRefresh int
	}{
		{"stored token", func() {}, 0},
		{"expired token", func() { expireStored(t, file) }, 1},
		{"revoked access token", fake.RevokeAccess, 2},
	}
	for _, st := range steps {
		st.before()
		cs, err := serve()
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		cs.Close()
		if got := fake.Count("refresh"); got != st.wantRefresh {
			t.Fatalf("%s: %d refreshes, want %d", st.name, got, st.wantRefresh)
		}
	}
	g, _ := tokenFile{path: file}.load()
	if g.Token.AccessToken != oauthtest.AccessPrefix+"5" { // 1 client, 2 code, 3 its tokens, 4 and 5 the refreshed ones
		t.Errorf("stored access token %q: not the last refreshed one", g.Token.AccessToken)
	}
	fake.RevokeAll()
	_, err := serve()
	var lr *LoginRequiredError
	if !errors.As(err, &lr) || !errors.Is(err, ErrLoginRequired) || !strings.Contains(err.Error(), "run `loopctl mcp-proxy login protected`") {
		t.Fatalf("all revoked: %v, want a LoginRequiredError", err)
	}
	if fake.Count("register") != 1 || fake.Count("authorize") != 1 {
		t.Errorf("a non-interactive client registered or authorized: %d, %d", fake.Count("register"), fake.Count("authorize"))
	}
}

// expireStored makes the stored token expired, as after a night's restart.
func expireStored(t *testing.T, file string) {
	t.Helper()
	f := tokenFile{path: file}
	g, err := f.load()
	if err != nil {
		t.Fatal(err)
	}
	g.Token.Expiry = time.Now().Add(-time.Hour)
	if err := f.save(g); err != nil {
		t.Fatal(err)
	}
}

// A token file is refused when group or others may read it, and one that is
// not a token file is an error that quotes none of its bytes.
func TestOAuthTokenFileChecks(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, data string
		mode       os.FileMode
		want       string
	}{
		{"world readable", `{}`, 0o644, "readable by group or others (mode 0644): chmod 600"},
		{"group readable", `{}`, 0o640, "(mode 0640)"},
		{"not JSON", `access-secret-9`, 0o600, "not a token file written by loopctl"},
		{"incomplete", `{"client_id":"c"}`, 0o600, "incomplete"},
	}
	for _, c := range cases {
		file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.WriteFile(file, []byte(c.data), c.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(file, c.mode) // past the umask
		_, err := NewOAuthHandler(OAuthOptions{Server: "s", TokenFile: file})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), oauthtest.AccessPrefix) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if insecure := c.mode&0o077 != 0; errors.Is(err, ErrTokenFileInsecure) != insecure {
			t.Errorf("%s: errors.Is(err, ErrTokenFileInsecure) = %v", c.name, !insecure)
		}
	}
	if _, err := NewOAuthHandler(OAuthOptions{Server: "s"}); err == nil || !strings.Contains(err.Error(), "TokenFile") {
		t.Errorf("no token file: %v", err)
	}
}

// The stored token file is valid JSON with the fields a refresh needs.
func TestOAuthTokenFileFormat(t *testing.T) {
	fake := oauthtest.New(nil)
	defer fake.Close()
	data, err := os.ReadFile(login(t, context.Background(), fake))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"server", "client_id", "token_url", "token"} {
		if _, ok := m[k]; !ok {
			t.Errorf("token file has no %q: %s", k, data)
		}
	}
}

// A client serving without a person adopts a token stored after it started
// (a login while the proxy runs) on the server's next 401, and only then.
func TestOAuthAdoptsLaterLogin(t *testing.T) {
	ctx := context.Background()
	fake := oauthtest.New(nil)
	t.Cleanup(fake.Close)
	file := filepath.Join(t.TempDir(), "later.json")
	h, err := NewOAuthHandler(OAuthOptions{Server: "protected", TokenFile: file})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectOAuth(ctx, fake, h); !errors.Is(err, ErrLoginRequired) {
		t.Fatalf("before the login: %v, want ErrLoginRequired", err)
	}
	data, err := os.ReadFile(login(t, ctx, fake))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := connectOAuth(ctx, fake, h)
	if err != nil {
		t.Fatalf("after the login: %v", err)
	}
	cs.Close()
}
