package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// TestAzureAuthConfig: auth type azure decodes with its scope, and each
// misuse is a problem at its key path.
func TestAzureAuthConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`
upstreams:
  - name: azure
    base_url: https://my-resource.openai.azure.com
    api_version: 2024-10-21
    auth: {type: azure}
  - {name: foundry, base_url: "https://my-project.services.ai.azure.com/openai/v1", auth: {type: azure, scope: "https://ai.azure.com/.default"}}
models: [{name: m, primary: azure/my-gpt-4o, chain: [foundry/gpt-4o]}]`))
	if err != nil {
		t.Fatal(err)
	}
	if u := c.Upstreams; u[0].Auth.Type != AuthAzure || u[0].Auth.Scope != "" || u[1].Auth.Scope != "https://ai.azure.com/.default" {
		t.Fatalf("decoded %+v", u)
	}
	for _, tc := range []struct {
		name, upstream string
		want           []string
	}{
		{"on an anthropic upstream", `{name: u, api: anthropic, base_url: "https://x", auth: {type: azure}}`,
			[]string{"upstreams[0].auth.type: azure is for api openai (Azure OpenAI), not anthropic"}},
		{"on bedrock", `{name: u, api: bedrock, region: us-east-1, auth: {type: azure}}`,
			[]string{"upstreams[0].auth.type: azure is for api openai (Azure OpenAI), not bedrock"}},
		{"with a key too", `{name: u, base_url: "https://x", api_key_env: AZURE_OPENAI_API_KEY, auth: {type: azure}}`,
			[]string{"upstreams[0].api_key_env: is not used with auth type azure"}},
		{"with a key file too", `{name: u, base_url: "https://x", api_key_file: /k, auth: {type: azure}}`,
			[]string{"upstreams[0].api_key_file: is not used with auth type azure"}},
		{"with command keys", `{name: u, base_url: "https://x", auth: {type: azure, command: [az], ttl: 5m}}`,
			[]string{"upstreams[0].auth: type azure takes scope only"}},
		{"a resource without /.default", `{name: u, base_url: "https://x", auth: {type: azure, scope: "https://cognitiveservices.azure.com"}}`,
			[]string{`upstreams[0].auth.scope: "https://cognitiveservices.azure.com" is not a scope such as https://cognitiveservices.azure.com/.default`}},
		{"a plain word", `{name: u, base_url: "https://x", auth: {type: azure, scope: cognitiveservices}}`,
			[]string{`upstreams[0].auth.scope: "cognitiveservices" is not a scope`}},
		{"http", `{name: u, base_url: "https://x", auth: {type: azure, scope: "http://x/.default"}}`,
			[]string{`upstreams[0].auth.scope: "http://x/.default" is not a scope`}},
		{"scope without azure", `{name: u, base_url: "https://x", api_key_env: K, auth: {scope: "https://ai.azure.com/.default"}}`,
			[]string{"upstreams[0].auth.scope: is for auth type azure, not bearer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte("upstreams: [" + tc.upstream + "]\nmodels: [{name: m, primary: u/x}]\n"))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	for _, ok := range []string{DefaultAzureScope, "https://ai.azure.com/.default", "api://0b1e5c1c-app/.default"} {
		if !azureScope(ok) {
			t.Errorf("%s refused", ok)
		}
	}
}

// TestAzureDefaultCredentialSelection: an AZURE_TOKEN_CREDENTIALS the SDK
// refuses is the upstream's problem at New, naming its auth.
func TestAzureDefaultCredentialSelection(t *testing.T) {
	isolateAzure(t)
	t.Setenv("AZURE_TOKEN_CREDENTIALS", "Kerberos")
	_, err := New(azureEntraConfig("https://my-resource.openai.azure.com", "", ""), Options{})
	if err == nil || !strings.Contains(err.Error(), "upstreams[0].auth: the Azure default credential does not load") || !strings.Contains(err.Error(), "AZURE_TOKEN_CREDENTIALS") {
		t.Fatalf("error %v", err)
	}
}

// scriptedCredential is an azcore.TokenCredential that answers from a
// script: token i expires in life, or fails when fail is set. While gate
// is not nil a call says so on entered and waits for gate to close.
type scriptedCredential struct {
	mu            sync.Mutex
	now           func() time.Time
	life          time.Duration
	fail          bool
	calls         int
	gate, entered chan struct{}
}

func (c *scriptedCredential) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.calls }

func (c *scriptedCredential) GetToken(ctx context.Context, _ policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.mu.Lock()
	c.calls++
	n, gate, fail := c.calls, c.gate, c.fail
	c.mu.Unlock()
	if gate != nil {
		c.entered <- struct{}{}
		select {
		case <-gate:
		case <-ctx.Done():
			return azcore.AccessToken{}, ctx.Err()
		}
	}
	if fail {
		return azcore.AccessToken{}, errors.New("DefaultAzureCredential: failed to acquire a token.\nAttempted credentials:\n\tEnvironmentCredential: missing environment variable AZURE_TENANT_ID\n\tAzureCLICredential: Azure CLI not found on path")
	}
	return azcore.AccessToken{Token: fmt.Sprintf("t%d", n), ExpiresOn: c.now().Add(c.life)}, nil
}

// TestAzureTokenCache: the cache's rule against a scripted credential
// and a stepped clock: a token is reused while fresh, replaced once in its
// refresh window (requests meanwhile keep the valid one), kept when an
// early refresh fails (tried again after azureRetryEvery), and an expired
// token with a failing credential is an error naming the sources tried.
func TestAzureTokenCache(t *testing.T) {
	clock := &stepClock{t: time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)}
	cred := &scriptedCredential{now: clock.now, life: time.Hour}
	a := &azureAuth{cred: cred, scope: DefaultAzureScope, now: clock.now}
	ctx := context.Background()
	step := func(d time.Duration, want string, calls int) {
		t.Helper()
		clock.add(d)
		got, err := a.token(ctx)
		if err != nil {
			got = "error: " + err.Error()
		}
		if cred.count() != calls || !strings.HasPrefix(got, want) {
			t.Fatalf("at +%v: %q after %d credential calls, want %q after %d", clock.now().Sub(time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)), got, cred.count(), want, calls)
		}
	}
	step(0, "t1", 1)
	step(54*time.Minute, "t1", 1) // 6 minutes left: fresh
	step(2*time.Minute, "t2", 2)  // 4 minutes left: replaced
	cred.mu.Lock()
	cred.fail = true
	cred.mu.Unlock()
	step(56*time.Minute, "t2", 3)    // t2 in its window: the refresh fails, t2 still serves
	step(azureRetryEvery/2, "t2", 3) // not tried again yet
	step(azureRetryEvery, "t2", 4)   // tried again, fails again
	step(5*time.Minute, "error: azure: no Microsoft Entra ID token for "+DefaultAzureScope+": DefaultAzureCredential: failed to acquire a token. Attempted credentials: EnvironmentCredential: missing environment variable AZURE_TENANT_ID; AzureCLICredential", 5)
	if _, err := a.token(ctx); !errors.Is(err, errAzureToken) {
		t.Fatalf("an expired token and a failing credential: %v, want errAzureToken", err)
	}
	cred.mu.Lock()
	cred.fail = false
	cred.mu.Unlock()
	step(0, "t7", 7)

	// In the window, one request fetches; the others keep the valid token
	// without waiting for it.
	clock.add(56 * time.Minute)
	cred.mu.Lock()
	cred.gate, cred.entered = make(chan struct{}), make(chan struct{})
	cred.mu.Unlock()
	fetched := make(chan string)
	go func() { tok, _ := a.token(ctx); fetched <- tok }()
	<-cred.entered
	for range 3 {
		if tok, err := a.token(ctx); tok != "t7" || err != nil {
			t.Fatalf("during the refresh: %q %v, want the valid t7", tok, err)
		}
	}
	close(cred.gate)
	if tok := <-fetched; tok != "t8" || cred.count() != 8 {
		t.Fatalf("the refresh gave %q after %d calls", tok, cred.count())
	}
}

func TestRefreshTime(t *testing.T) {
	now := time.Date(2026, 12, 7, 1, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name               string
		expires, refreshOn time.Duration
		want               time.Duration
	}{
		{"an hour's token: 5 minutes before", time.Hour, 0, 55 * time.Minute},
		{"4 minutes: half way", 4 * time.Minute, 0, 2 * time.Minute},
		{"the issuer's refresh time", 24 * time.Hour, 12 * time.Hour, 12 * time.Hour},
		{"a refresh time after expiry: ignored", time.Hour, 2 * time.Hour, 55 * time.Minute},
	} {
		tok := azcore.AccessToken{Token: "t", ExpiresOn: now.Add(tc.expires)}
		if tc.refreshOn != 0 {
			tok.RefreshOn = now.Add(tc.refreshOn)
		}
		if got := refreshTime(tok, now).Sub(now); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// BenchmarkAzureAuthorize: a request's cost of an azure upstream's cached
// token (the lock, the clock, the header).
func BenchmarkAzureAuthorize(b *testing.B) {
	cred := &scriptedCredential{now: time.Now, life: time.Hour}
	a := &azureAuth{cred: cred, scope: DefaultAzureScope, now: time.Now}
	req, _ := http.NewRequest(http.MethodPost, "https://my-resource.openai.azure.com/openai/deployments/d/chat/completions", nil)
	b.ReportAllocs()
	for b.Loop() {
		if err := a.authorize(context.Background(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
	if cred.count() != 1 {
		b.Fatalf("%d tokens fetched, want 1", cred.count())
	}
}
