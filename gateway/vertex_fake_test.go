package gateway

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

// tokenServer is a local Google OAuth2 token endpoint: it checks the
// service account's signed JWT assertion (RS256, scope cloud-platform) and
// issues access tokens tok-1, tok-2, ... valid for expiresIn seconds.
type tokenServer struct {
	*httptest.Server
	key       *rsa.PrivateKey
	mu        sync.Mutex
	issued    []string
	expiresIn int
}

func newTokenServer(t *testing.T) *tokenServer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ts := &tokenServer{key: key, expiresIn: 3600}
	ts.Server = httptest.NewServer(http.HandlerFunc(ts.serve))
	t.Cleanup(ts.Close)
	return ts
}

func (ts *tokenServer) serve(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	if r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || !ts.validAssertion(r.Form.Get("assertion")) {
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, `{"error":"invalid_grant","error_description":"bad assertion"}`)
		return
	}
	ts.mu.Lock()
	tok := fmt.Sprintf("tok-%d", len(ts.issued)+1)
	ts.issued = append(ts.issued, tok)
	exp := ts.expiresIn
	ts.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": exp})
}

// validAssertion checks the JWT's RS256 signature with the account's
// public key, its audience (this endpoint) and its scope.
func (ts *tokenServer) validAssertion(jwt string) bool {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return false
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return false
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if rsa.VerifyPKCS1v15(&ts.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		return false
	}
	claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct {
		Aud, Scope string
	}
	_ = json.Unmarshal(claims, &c)
	return c.Aud == ts.URL+"/token" && c.Scope == googleScope
}

// tokens returns the tokens issued so far.
func (ts *tokenServer) tokens() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.issued...)
}

// valid reports whether tok was issued (and is the last one: a refreshed
// token replaces the one before).
func (ts *tokenServer) valid(tok string) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return len(ts.issued) > 0 && ts.issued[len(ts.issued)-1] == tok
}

// useServiceAccount writes a service-account key whose token_uri is ts and
// points GOOGLE_APPLICATION_CREDENTIALS at it.
func useServiceAccount(t *testing.T, ts *tokenServer) {
	der := x509.MarshalPKCS1PrivateKey(ts.key)
	key := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der})
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "loopctl-test", "private_key_id": "k1", "private_key": string(key),
		"client_email": "gateway@loopctl-test.iam.gserviceaccount.com", "client_id": "1", "token_uri": ts.URL + "/token",
	})
	p := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", p)
}

// vertexFake is Vertex AI's Anthropic publisher: rawPredict,
// streamRawPredict and count-tokens, each checking the bearer token
// against the token endpoint. A model named exhausted-quota or exhausted
// answers Google's RESOURCE_EXHAUSTED (naming a quota, or not).
type vertexFake struct {
	*httptest.Server
	log              cloudLog
	an               *llmtest.Handler
	tokens           *tokenServer
	project, region  string
	unauthorizedSeen int
}

func newVertexFake(t *testing.T, tokens *tokenServer, project, region string, script llmtest.Script) *vertexFake {
	f := &vertexFake{an: llmtest.NewAnthropicHandler(script), tokens: tokens, project: project, region: region}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

func (f *vertexFake) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || !f.tokens.valid(tok) {
		f.log.mu.Lock()
		f.unauthorizedSeen++
		f.log.mu.Unlock()
		googleAnswer(w, 401, "UNAUTHENTICATED", "Request had invalid authentication credentials.")
		return
	}
	m := f.log.add(r, body)
	project, region, model, method, ok := vertexPath(r.URL.EscapedPath())
	if !ok || project != f.project || region != f.region || (method != "rawPredict" && method != "streamRawPredict") {
		googleAnswer(w, 404, "NOT_FOUND", "no such model path "+r.URL.Path)
		return
	}
	count := model == "count-tokens"
	if m["anthropic_version"] != vertexVersion || (m["model"] != nil) != count {
		googleAnswer(w, 400, "INVALID_ARGUMENT", "the body must have anthropic_version "+vertexVersion+" and a model only for count-tokens")
		return
	}
	switch model {
	case "exhausted-quota":
		googleAnswer(w, 429, "RESOURCE_EXHAUSTED", "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model")
		return
	case "exhausted":
		googleAnswer(w, 429, "RESOURCE_EXHAUSTED", "Resource exhausted, please try again later.")
		return
	}
	delete(m, "anthropic_version")
	path := "/v1/messages"
	if count {
		path = "/v1/messages/count_tokens"
	} else {
		m["model"] = model
	}
	b, _ := json.Marshal(m)
	f.an.ServeHTTP(w, httptest.NewRequestWithContext(r.Context(), http.MethodPost, path, bytes.NewReader(b)))
}

// googleAnswer writes a Google API error answer.
func googleAnswer(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode([]any{map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status}}})
}

// azureFake is an Azure OpenAI resource's v1 API (base URL
// .../openai/v1): it serves only requests carrying api-key: key (and no
// Authorization header), the deployment name as the model.
type azureFake struct {
	*httptest.Server
	oa  *llmtest.Handler
	key string
	mu  sync.Mutex
	bad int
}

func newAzureFake(t *testing.T, key string, script llmtest.Script) *azureFake {
	f := &azureFake{oa: llmtest.NewOpenAIHandler(script), key: key}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Api-Key") != f.key || r.Header.Get("Authorization") != "" || !strings.HasPrefix(r.URL.Path, "/openai/v1/") {
			f.mu.Lock()
			f.bad++
			f.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}`)
			return
		}
		f.oa.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// base is the fake's base_url.
func (f *azureFake) base() string { return f.URL + "/openai/v1" }
