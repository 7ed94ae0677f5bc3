package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

// Microsoft Entra ID and an Azure OpenAI resource that takes its tokens,
// both local, for the azure auth type's tests: the real azidentity and
// MSAL code asks the fake for tokens, through a gateway transport that
// sends Entra's host (login.microsoftonline.com, the SDK's default
// authority) to the fake and refuses any other host but loopback.

// entraFake is Entra ID's OpenID discovery and token endpoints for one
// tenant and one service principal (client credentials with a secret).
type entraFake struct {
	*httptest.Server
	tenant, client, secret string
	mu                     sync.Mutex
	expiresIn              int      // lifetime of the next token issued (seconds)
	fail                   int      // when not 0, the status every token request answers
	issued                 []string // every token issued, in order
	scopes                 []string // the scope of every token request
}

func newEntraFake(t *testing.T) *entraFake {
	f := &entraFake{tenant: "tenant-1", client: "client-1", secret: "entra-secret", expiresIn: 3600}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// entraHost is the authority host the SDK asks by default.
const entraHost = "login.microsoftonline.com"

func (f *entraFake) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	base := "https://" + entraHost + "/" + f.tenant
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/"+f.tenant+"/v2.0/.well-known/openid-configuration":
		_ = json.NewEncoder(w).Encode(map[string]string{
			"authorization_endpoint": base + "/oauth2/v2.0/authorize",
			"token_endpoint":         base + "/oauth2/v2.0/token",
			"issuer":                 base + "/v2.0",
		})
	case r.Method == http.MethodPost && r.URL.Path == "/"+f.tenant+"/oauth2/v2.0/token":
		f.token(w, r)
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":"not_found"}`)
	}
}

func (f *entraFake) token(w http.ResponseWriter, r *http.Request) {
	_ = r.ParseForm()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scopes = append(f.scopes, r.Form.Get("scope"))
	if f.fail != 0 {
		w.WriteHeader(f.fail)
		_, _ = io.WriteString(w, `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided. secret-in-body"}`)
		return
	}
	if r.Form.Get("grant_type") != "client_credentials" || r.Form.Get("client_id") != f.client || r.Form.Get("client_secret") != f.secret {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"invalid_client"}`)
		return
	}
	tok := fmt.Sprintf("entra-%d", len(f.issued)+1)
	f.issued = append(f.issued, tok)
	_ = json.NewEncoder(w).Encode(map[string]any{"token_type": "Bearer", "access_token": tok, "expires_in": f.expiresIn, "ext_expires_in": f.expiresIn})
}

// state returns the tokens issued and the scopes asked for so far.
func (f *entraFake) state() (issued, scopes []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.issued...), append([]string(nil), f.scopes...)
}

// latest is the newest token issued ("": none).
func (f *entraFake) latest() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.issued) == 0 {
		return ""
	}
	return f.issued[len(f.issued)-1]
}

// useEnv points azidentity's default chain at the fake's service
// principal through the environment (EnvironmentCredential, first in the
// chain), with every other Azure variable unset.
func (f *entraFake) useEnv(t *testing.T) {
	isolateAzure(t)
	t.Setenv("AZURE_TENANT_ID", f.tenant)
	t.Setenv("AZURE_CLIENT_ID", f.client)
	t.Setenv("AZURE_CLIENT_SECRET", f.secret)
}

// isolateAzure unsets every variable azidentity's default chain reads
// (some are looked up, so set-but-empty would count) and empties PATH of
// the Azure tools.
func isolateAzure(t *testing.T) {
	t.Helper()
	for _, k := range []string{"AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH",
		"AZURE_CLIENT_CERTIFICATE_PASSWORD", "AZURE_USERNAME", "AZURE_PASSWORD", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_AUTHORITY_HOST",
		"AZURE_TOKEN_CREDENTIALS", "AZURE_ADDITIONALLY_ALLOWED_TENANTS", "AZURE_REGIONAL_AUTHORITY_NAME",
		"IDENTITY_ENDPOINT", "IDENTITY_HEADER", "IDENTITY_SERVER_THUMBPRINT", "IMDS_ENDPOINT", "MSI_ENDPOINT", "MSI_SECRET"} {
		t.Setenv(k, "")
		_ = os.Unsetenv(k)
	}
	t.Setenv("PATH", t.TempDir())
}

// entraTransport sends requests for Entra's host to the fake (over plain
// HTTP), loopback requests as they are, and refuses every other host:
// nothing of a test leaves the machine.
type entraTransport struct{ entra *url.URL }

func (e entraTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	switch host := r.URL.Hostname(); {
	case host == entraHost:
		to := r.Clone(r.Context())
		to.URL.Scheme, to.URL.Host, to.Host = "http", e.entra.Host, e.entra.Host
		resp, err := http.DefaultTransport.RoundTrip(to)
		if err == nil {
			resp.Request = r // as if Entra's host had answered
		}
		return resp, err
	case host != "127.0.0.1":
		return nil, fmt.Errorf("test transport: %s is not reachable offline", r.URL.Host)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// transport is the gateway transport that reaches f.
func (f *entraFake) transport() http.RoundTripper {
	u, _ := url.Parse(f.URL)
	return entraTransport{entra: u}
}

// entraResource is an Azure OpenAI resource on the deployments path
// (api_version) that serves only requests carrying the entra fake's
// newest token as a bearer token, and no api-key.
type entraResource struct {
	*httptest.Server
	mu      sync.Mutex
	seen    []string // the Authorization header of every request
	unknown int      // requests with another token
}

func newEntraResource(t *testing.T, entra *entraFake, script llmtest.Script) *entraResource {
	oa := llmtest.NewOpenAIHandler(script)
	f := &entraResource{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		f.mu.Lock()
		f.seen = append(f.seen, auth)
		ok := auth == "Bearer "+entra.latest() && r.Header.Get("Api-Key") == "" && r.URL.Query().Get("api-version") == "2024-10-21"
		if !ok {
			f.unknown++
		}
		f.mu.Unlock()
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"code":"401","message":"Unauthorized. Access token is missing, invalid, audience is incorrect, or have expired."}}`)
			return
		}
		r.URL.Path, r.URL.RawQuery = strings.Replace(r.URL.Path, "/openai/deployments/my-gpt-4o/", "/v1/", 1), ""
		oa.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// headers returns the Authorization header of every request so far and
// how many carried a token that was not the newest.
func (f *entraResource) headers() ([]string, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...), f.unknown
}
