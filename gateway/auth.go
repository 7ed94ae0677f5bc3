package gateway

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"go.yaml.in/yaml/v3"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Upstream authentication (docs/GATEWAY.md §10.1): a static key in a
// header, AWS Signature Version 4 through aws-sdk-go-v2, Google's
// application default credentials through golang.org/x/oauth2/google,
// Microsoft Entra ID tokens through azidentity (azureauth.go), or a token
// helper command. Credentials and tokens are never logged, put in a
// metric or sent to a client: errors name the upstream and the step, never
// a credential or the helper's output.

// Auth types (Auth.Type).
const (
	AuthBearer  = "bearer"    // Authorization: Bearer <key>
	AuthXAPIKey = "x-api-key" // x-api-key: <key> (Anthropic)
	AuthAPIKey  = "api-key"   // api-key: <key> (Azure OpenAI)
	AuthSigV4   = "sigv4"     // AWS Signature Version 4 (Bedrock)
	AuthGoogle  = "google"    // Google application default credentials (Vertex AI)
	AuthCommand = "command"   // a token helper's output, as a bearer token
	AuthAzure   = "azure"     // a Microsoft Entra ID token from azidentity's default credential (Azure OpenAI)
)

// DefaultCommandTTL is how long a token helper's token is used (Auth.TTL's
// default).
const DefaultCommandTTL = 5 * time.Minute

// googleScope is the OAuth2 scope of a google-authenticated upstream.
const googleScope = "https://www.googleapis.com/auth/cloud-platform"

// Auth is how the gateway authenticates to an upstream (YAML auth). The
// zero value is the default of the upstream's api: bearer for openai,
// x-api-key for anthropic, sigv4 for bedrock, google for vertex.
type Auth struct {
	// Type is bearer, x-api-key or api-key (each with the key from the
	// upstream's api_key_env), sigv4, google, azure or command. "": the
	// api's default.
	Type string
	// Region is sigv4's signing region. "": the upstream's region, else
	// the AWS SDK's (AWS_REGION, the shared config file).
	Region string
	// Service is sigv4's signing service. "": bedrock.
	Service string
	// Command is the token helper and its arguments (command): its
	// standard output, trimmed, is the token. It runs without a shell.
	Command []string
	// TTL is how long a token helper's token is used before the command
	// runs again (it also runs again after a 401). 0: 5m.
	TTL time.Duration
	// Scope is the OAuth2 scope an azure token is asked for. "":
	// DefaultAzureScope (Azure OpenAI's); Azure AI Foundry's is
	// https://ai.azure.com/.default.
	Scope string
}

// authType returns the effective auth type of upstream c.
func authType(c Upstream) string {
	if c.Auth.Type != "" {
		return c.Auth.Type
	}
	switch c.API {
	case APIAnthropic:
		return AuthXAPIKey
	case APIBedrock:
		return AuthSigV4
	case APIVertex:
		return AuthGoogle
	}
	return AuthBearer
}

// keyHeaders are the header each static-key auth type sends its key in.
var keyHeaders = map[string]string{AuthBearer: "Authorization", AuthXAPIKey: "X-Api-Key", AuthAPIKey: "Api-Key"}

// auth decodes an upstream's auth section.
func (d decoder) auth(a *Auth) func(string, *yaml.Node) {
	return func(p string, v *yaml.Node) {
		d.fields(p, v, map[string]func(string, *yaml.Node){
			"type":    d.str(&a.Type),
			"region":  d.str(&a.Region),
			"service": d.str(&a.Service),
			"command": d.chain(&a.Command),
			"ttl":     d.positive(&a.TTL),
			"scope":   d.str(&a.Scope),
		})
	}
}

// authProblems checks upstream u's auth, region and project (at path p).
func (ps *problems) authProblems(p string, u Upstream) {
	t := authType(u)
	if u.Auth.Scope != "" && t != AuthAzure {
		ps.add(p+".auth.scope", "is for auth type azure, not %s", t)
	}
	switch t {
	case AuthBearer, AuthXAPIKey, AuthAPIKey:
		if u.Auth.Command != nil || u.Auth.TTL != 0 || u.Auth.Region != "" || u.Auth.Service != "" {
			ps.add(p+".auth", "type %s takes its key from api_key_env only (command, ttl, region and service are for other types)", t)
		}
	case AuthAzure:
		ps.azureAuthProblems(p, u)
	case AuthSigV4:
		if u.APIKeyEnv != "" {
			ps.add(p+".api_key_env", "is not used with auth type sigv4 (credentials come from the AWS SDK's default chain)")
		}
	case AuthGoogle:
		if u.APIKeyEnv != "" {
			ps.add(p+".api_key_env", "is not used with auth type google (credentials come from Google's application default credentials)")
		}
	case AuthCommand:
		if len(u.Auth.Command) == 0 || u.Auth.Command[0] == "" {
			ps.add(p+".auth.command", "required for auth type command (the token helper and its arguments)")
		}
		if u.Auth.TTL < 0 {
			ps.add(p+".auth.ttl", "must not be negative")
		}
	default:
		ps.add(p+".auth.type", "%q is not bearer, x-api-key, api-key, sigv4, google, azure or command", t)
	}
	ps.cloudProblems(p, u)
}

// authorizer authenticates upstream requests that need more than a static
// header: it sets the request's credentials over its final bytes.
type authorizer interface {
	authorize(ctx context.Context, req *http.Request, body []byte) error
}

// renewer is an authorizer whose credential an upstream's 401 may have
// outdated: rejected drops it, so that the next request gets a fresh one,
// and reports whether that is worth a second try.
type renewer interface {
	rejected() bool
}

// setAuth sets up u's authentication from its config c: the static key's
// header, or an authorizer. The error is a problem of the config (at p).
func (ps *problems) setAuth(p string, u *upstream, c Upstream, now func() time.Time, rt http.RoundTripper) {
	switch authType(c) {
	case AuthAzure:
		a, err := newAzureAuth(c, now, rt)
		if err != nil {
			ps.add(p+".auth", "%v", err)
			return
		}
		u.auth = a
	case AuthSigV4:
		a, err := newSigV4(c)
		if err != nil {
			ps.add(p+".auth", "%v", err)
			return
		}
		u.auth = a
	case AuthGoogle:
		u.auth = &googleAuth{}
	case AuthCommand:
		u.auth = &commandAuth{argv: c.Auth.Command, ttl: orDefault(c.Auth.TTL, DefaultCommandTTL), now: now}
	}
}

// sigv4Auth signs requests with AWS Signature Version 4: credentials from
// the AWS SDK's default chain (cached and refreshed by the SDK), the
// SDK's signer over the final request bytes.
type sigv4Auth struct {
	creds           aws.CredentialsProvider
	signer          *v4.Signer
	region, service string
}

// newSigV4 loads the AWS SDK's default configuration for upstream c: its
// region (auth.region, else the upstream's, else the SDK's own) and
// credential chain. Nothing is fetched yet: credentials are retrieved on
// the first request.
func newSigV4(c Upstream) (*sigv4Auth, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if r := cmp.Or(c.Auth.Region, c.Region); r != "" {
		opts = append(opts, awsconfig.WithRegion(r))
	}
	cfg, err := awsconfig.LoadDefaultConfig(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("the AWS configuration does not load: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("sigv4 needs a region: set the upstream's region (or AWS_REGION)")
	}
	return &sigv4Auth{creds: cfg.Credentials, signer: v4.NewSigner(), region: cfg.Region, service: cmp.Or(c.Auth.Service, "bedrock")}, nil
}

func (a *sigv4Auth) authorize(ctx context.Context, req *http.Request, body []byte) error {
	if a.creds == nil {
		return errors.New("sigv4: no AWS credentials found in the default chain")
	}
	c, err := a.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("sigv4: the AWS credentials could not be retrieved: %w", err)
	}
	sum := sha256.Sum256(body)
	return a.signer.SignHTTP(ctx, c, req, hex.EncodeToString(sum[:]), a.service, a.region, time.Now())
}

// googleAuth sends an OAuth2 access token from Google's application
// default credentials, found on the first request (so that building a
// gateway never probes the metadata server), cached and refreshed by
// oauth2.ReuseTokenSource before it expires.
type googleAuth struct {
	mu sync.Mutex
	ts oauth2.TokenSource
}

// googleTokenTimeout bounds one token request of a google upstream.
const googleTokenTimeout = 30 * time.Second

func (a *googleAuth) source() (oauth2.TokenSource, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ts != nil {
		return a.ts, nil
	}
	// The token source keeps this context for its token requests: it
	// carries only their HTTP client, bounded in time.
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Timeout: googleTokenTimeout})
	creds, err := google.FindDefaultCredentials(ctx, googleScope)
	if err != nil {
		return nil, fmt.Errorf("google: no application default credentials: %w", err)
	}
	a.ts = creds.TokenSource
	return a.ts, nil
}

func (a *googleAuth) authorize(_ context.Context, req *http.Request, _ []byte) error {
	ts, err := a.source()
	if err != nil {
		return err
	}
	tok, err := ts.Token()
	if err != nil {
		return fmt.Errorf("google: no access token: %w", redactTokenError(err))
	}
	req.Header["Authorization"] = []string{"Bearer " + tok.AccessToken}
	return nil
}

// redactTokenError keeps a token endpoint's error code and drops the body
// it answered with.
func redactTokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return fmt.Errorf("the token endpoint answered %d %s", re.Response.StatusCode, re.ErrorCode)
	}
	return err
}

// commandAuth runs a token helper: its trimmed standard output is sent as
// a bearer token until ttl has passed or an answer is 401. Its failure is
// the upstream's; its output is never logged.
type commandAuth struct {
	argv []string
	ttl  time.Duration
	now  func() time.Time
	mu   sync.Mutex
	tok  string
	at   time.Time
}

// errCommand is the error of a token helper that failed.
var errCommand = errors.New("the auth command failed")

func (a *commandAuth) token(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tok != "" && a.now().Sub(a.at) < a.ttl {
		return a.tok, nil
	}
	cmd := exec.CommandContext(ctx, a.argv[0], a.argv[1:]...)
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%w: %s exited with %d", errCommand, a.argv[0], ee.ExitCode())
		}
		return "", fmt.Errorf("%w: %s: %w", errCommand, a.argv[0], err) // not started: no output to hide
	}
	tok := string(bytes.TrimSpace(out))
	if tok == "" {
		return "", fmt.Errorf("%w: %s printed no token", errCommand, a.argv[0])
	}
	a.tok, a.at = tok, a.now()
	return tok, nil
}

func (a *commandAuth) authorize(ctx context.Context, req *http.Request, _ []byte) error {
	tok, err := a.token(ctx)
	if err != nil {
		return err
	}
	req.Header["Authorization"] = []string{"Bearer " + tok}
	return nil
}

func (a *commandAuth) rejected() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.tok = ""
	return true
}
