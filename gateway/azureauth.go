package gateway

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
)

// Microsoft Entra ID tokens for Azure OpenAI (auth type azure,
// docs/gateway.md): azidentity's DefaultAzureCredential finds the
// credentials (the environment's client secret or certificate, workload
// identity, a managed identity, the Azure CLI, the Azure Developer CLI,
// Azure PowerShell, in that order, or those AZURE_TOKEN_CREDENTIALS
// selects), and the gateway keeps the token until a few minutes before it
// expires, as the Azure SDK's own clients do: the Azure CLI's credential
// has no cache of its own, and a token asked for on every request would
// run az on every request.

// DefaultAzureScope is the OAuth2 scope an azure upstream's token is asked
// for (Auth.Scope's default): Azure OpenAI's resource, Cognitive Services.
const DefaultAzureScope = "https://cognitiveservices.azure.com/.default"

// azureRefreshBefore is how long before its expiry a token is replaced
// (the Azure SDK's margin): a request never leaves with a token about to
// expire, and a refresh that fails leaves minutes to try again.
const azureRefreshBefore = 5 * time.Minute

// azureRetryEvery spaces the early refreshes of a token that still
// serves: one that failed is tried again after this, not on every request.
const azureRetryEvery = 30 * time.Second

// azureTokenTimeout bounds one token request of an azure upstream.
const azureTokenTimeout = 30 * time.Second

// azureAuth sends a Microsoft Entra ID access token as a bearer token.
// One request at a time fetches a token; while the current one is valid
// every other request keeps sending it, so only a request that finds no
// valid token waits for one. A failure to get one is the upstream's, its
// error naming the sources tried and never a credential.
type azureAuth struct {
	cred   azcore.TokenCredential
	client *http.Client // the token requests' (the gateway's transport), for the check's managed identity too
	scope  string
	now    func() time.Time
	mu     sync.Mutex
	tok    azcore.AccessToken // Token "": none yet
	// refreshAt is when tok is replaced; tried when an early refresh last
	// failed; fetching, while not nil, is closed when the request fetching
	// a token is done.
	refreshAt, tried time.Time
	fetching         chan struct{}
}

// newAzureAuth builds upstream c's credential chain, its token requests
// sent through rt. Nothing is fetched yet: the chain reads the environment
// now and asks for a token on the first request.
func newAzureAuth(c Upstream, now func() time.Time, rt http.RoundTripper) (*azureAuth, error) {
	client := &http.Client{Transport: rt}
	opts := &azidentity.DefaultAzureCredentialOptions{}
	opts.Transport = client
	cred, err := azidentity.NewDefaultAzureCredential(opts)
	if err != nil {
		return nil, fmt.Errorf("the Azure default credential does not load: %w", err)
	}
	return &azureAuth{cred: cred, client: client, scope: cmp.Or(c.Auth.Scope, DefaultAzureScope), now: now}, nil
}

func (a *azureAuth) authorize(ctx context.Context, req *http.Request, _ []byte) error {
	tok, err := a.token(ctx)
	if err != nil {
		return err
	}
	req.Header["Authorization"] = []string{"Bearer " + tok}
	return nil
}

// token returns a valid token: the cached one while it is fresh (or while
// another request fetches its successor, or an early refresh failed less
// than azureRetryEvery ago), else a new one.
func (a *azureAuth) token(ctx context.Context) (string, error) {
	for {
		a.mu.Lock()
		now := a.now()
		valid := a.tok.Token != "" && now.Before(a.tok.ExpiresOn)
		if valid && (now.Before(a.refreshAt) || a.fetching != nil || now.Sub(a.tried) < azureRetryEvery) {
			tok := a.tok.Token
			a.mu.Unlock()
			return tok, nil
		}
		if wait := a.fetching; wait != nil {
			a.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		done := make(chan struct{})
		a.fetching = done
		a.mu.Unlock()
		return a.fetch(ctx, done)
	}
}

// errAzureToken is the error of an azure upstream whose credential gave
// no token.
var errAzureToken = errors.New("azure: no Microsoft Entra ID token")

// fetch asks the credential chain for a token and caches it; done is
// closed after. An early refresh that fails keeps the valid token. The
// fetch serves every request waiting for it, so the client of the one
// that runs it leaving does not end it: azureTokenTimeout does.
func (a *azureAuth) fetch(ctx context.Context, done chan struct{}) (string, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), azureTokenTimeout)
	defer cancel()
	t, err := a.cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{a.scope}})
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fetching = nil
	close(done)
	now := a.now()
	if err == nil && t.Token != "" {
		a.tok, a.refreshAt = t, refreshTime(t, now)
		return t.Token, nil
	}
	if a.tok.Token != "" && now.Before(a.tok.ExpiresOn) {
		a.tried = now
		return a.tok.Token, nil
	}
	if err == nil {
		err = errors.New("the credential gave an empty token")
	}
	return "", fmt.Errorf("%w for %s: %s", errAzureToken, a.scope, azureErrorText(err))
}

// refreshTime is when token t, got at now, is replaced: at the refresh
// time its issuer suggests, else azureRefreshBefore before it expires, or
// half way through a token that lives less than twice that.
func refreshTime(t azcore.AccessToken, now time.Time) time.Time {
	if !t.RefreshOn.IsZero() && t.RefreshOn.Before(t.ExpiresOn) {
		return t.RefreshOn
	}
	return t.ExpiresOn.Add(-min(azureRefreshBefore, t.ExpiresOn.Sub(now)/2))
}

// azureErrorText is a credential error on one line: a token endpoint's
// answer as its status, URL and error code (never its body), else the
// SDK's message (the sources tried and why each gave nothing, one a line)
// with its lines joined by "; ".
func azureErrorText(err error) string {
	var af *azidentity.AuthenticationFailedError
	if errors.As(err, &af) && af.RawResponse != nil {
		r := af.RawResponse
		where := ""
		if r.Request != nil && r.Request.URL != nil {
			where = " (" + r.Request.URL.Host + r.Request.URL.Path + ")"
		}
		return fmt.Sprintf("the token endpoint answered %d%s%s", r.StatusCode, where, tokenErrorCode(r))
	}
	msg := strings.ReplaceAll(strings.ReplaceAll(err.Error(), ":\n\t", ": "), "\n\t", "; ")
	return strings.Join(strings.Fields(msg), " ")
}

// tokenErrorCode is an OAuth2 error answer's code ("invalid_client"), ": "
// before it; "" when the body has none. The rest of the body is dropped.
func tokenErrorCode(r *http.Response) string {
	if r.Body == nil {
		return ""
	}
	var e struct {
		Error string `json:"error"`
	}
	b, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if json.Unmarshal(b, &e) != nil || e.Error == "" || strings.ContainsAny(e.Error, " \n") {
		return ""
	}
	return ": " + e.Error
}

// azureAuthProblems checks the keys of an upstream u (at p) with auth type
// azure: an openai upstream (Azure OpenAI's), no key besides the token,
// and a scope of the form Entra ID asks for.
func (ps *problems) azureAuthProblems(p string, u Upstream) {
	if u.API != "" && u.API != APIOpenAI {
		ps.add(p+".auth.type", "azure is for api openai (Azure OpenAI), not %s", u.API)
	}
	const why = "is not used with auth type azure (the token comes from Microsoft Entra ID through azidentity's default credential)"
	for _, k := range []struct{ key, v string }{{"api_key_env", u.APIKeyEnv}, {"api_key_file", u.APIKeyFile}, {"api_key", u.APIKey}} {
		if k.v != "" {
			ps.add(p+"."+k.key, why)
		}
	}
	if u.Auth.Command != nil || u.Auth.TTL != 0 || u.Auth.Region != "" || u.Auth.Service != "" {
		ps.add(p+".auth", "type azure takes scope only (command, ttl, region and service are for other types)")
	}
	if s := u.Auth.Scope; s != "" && !azureScope(s) {
		ps.add(p+".auth.scope", "%q is not a scope such as %s (a resource URI ending in /.default)", s, DefaultAzureScope)
	}
}

// azureScope reports whether s is a scope a service credential can ask
// for: an https:// or api:// resource with a host, ending in /.default.
func azureScope(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "api") && u.Host != "" &&
		strings.HasSuffix(u.Path, "/.default") && u.RawQuery == "" && u.Fragment == "" && !strings.ContainsAny(s, " \t\n")
}
