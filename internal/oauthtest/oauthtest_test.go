package oauthtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The fake verifies PKCE: a code is exchanged only with the verifier whose
// S256 challenge the authorization request carried, and a request without a
// challenge gets no code.
func TestFakeVerifiesPKCE(t *testing.T) {
	s := New(nil)
	defer s.Close()
	resp, err := http.Post(s.AS.URL+"/register", "application/json", strings.NewReader(`{"redirect_uris":["http://127.0.0.1:1/cb"]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sum := sha256.Sum256([]byte("the-verifier"))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	authorize := func(challenge string) (url.Values, error) {
		q := url.Values{"client_id": {"client-1"}, "redirect_uri": {"http://127.0.0.1:1/cb"}, "response_type": {"code"},
			"state": {"st"}, "resource": {s.MCPURL}}
		if challenge != "" {
			q.Set("code_challenge", challenge)
			q.Set("code_challenge_method", "S256")
		}
		return Approve(context.Background(), s.AS.URL+"/authorize?"+q.Encode())
	}
	if _, err := authorize(""); err == nil {
		t.Fatal("a code without a PKCE challenge")
	}
	exchange := func(verifier string) int {
		q, err := authorize(challenge)
		if err != nil || q.Get("state") != "st" {
			t.Fatalf("authorize: %v, %v", q, err)
		}
		resp, err := http.PostForm(s.AS.URL+"/token", url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")},
			"client_id": {"client-1"}, "redirect_uri": {"http://127.0.0.1:1/cb"}, "code_verifier": {verifier}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := exchange("another-verifier"); got != http.StatusBadRequest {
		t.Fatalf("a wrong verifier: %d, want 400", got)
	}
	if got := exchange("the-verifier"); got != http.StatusOK {
		t.Fatalf("the right verifier: %d, want 200", got)
	}
	p := s.Problems()
	if len(p) != 2 || !strings.Contains(p[0], "no PKCE") || !strings.Contains(p[1], "PKCE verifier does not match") {
		t.Fatalf("problems %q", p)
	}
}
