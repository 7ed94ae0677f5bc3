package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"golang.org/x/oauth2/google"
)

// NetworkCheckTimeout bounds [Gateway.CheckCredentials]'s look at a
// credential source that needs the network (the EC2 instance metadata
// endpoint, Google's metadata server, an Azure managed identity's
// endpoint): where none answers that fast, none is there.
const NetworkCheckTimeout = time.Second

// commandCheckTimeout bounds the one run of a token helper a check makes.
const commandCheckTimeout = 30 * time.Second

// CredentialCheck is what [Gateway.CheckCredentials] found for one
// upstream whose credentials are not a static key (sigv4, google, azure,
// command: a static key's variable or file is checked by [New]).
type CredentialCheck struct {
	// Upstream is the upstream's name; Path its key path
	// ("upstreams[2].auth").
	Upstream, Path string
	// Source is where the credentials were found, or, with Problem, every
	// source looked at.
	Source string
	// Problem, when not empty, is why no credentials were found: the
	// upstream would fail every request.
	Problem string
	// Warning, when not empty, says the credentials came from a source
	// that needs the network: they were found here, but are only as good as
	// that endpoint where the gateway runs.
	Warning string
}

// credentialChecker is an authorizer whose credentials a check can
// resolve before any request.
type credentialChecker interface {
	check(ctx context.Context) (source, warning string, err error)
}

// CheckCredentials resolves the credentials of every upstream that has
// no static key, from the local sources (the environment, the AWS shared
// files, Google's credentials files, workload identity's token file, the
// Azure CLI on PATH, a token helper run once), and from a source that
// needs the network (an instance metadata or managed identity endpoint)
// only when no local one has them, within
// [NetworkCheckTimeout]. It returns one check per such upstream, in config
// order. serve --check runs it: a credential missing is found before the
// first failover needs it.
func (g *Gateway) CheckCredentials(ctx context.Context) []CredentialCheck {
	var out []CredentialCheck
	for i, c := range g.cfg.Upstreams {
		u := g.upstreams[c.Name]
		cc, ok := u.auth.(credentialChecker)
		if !ok {
			continue
		}
		r := CredentialCheck{Upstream: c.Name, Path: fmt.Sprintf("upstreams[%d].auth", i)}
		src, warn, err := cc.check(ctx)
		r.Source, r.Warning = src, warn
		if err != nil {
			r.Problem = err.Error()
		}
		out = append(out, r)
	}
	return out
}

// check finds AWS credentials in the local sources of the SDK's default
// chain (the instance metadata endpoint off), else in the whole chain
// within NetworkCheckTimeout.
func (a *sigv4Auth) check(ctx context.Context) (string, string, error) {
	const local = "the environment (AWS_ACCESS_KEY_ID) and the shared files (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE, ~/.aws)"
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(a.region), awsconfig.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	if err != nil {
		return local, "", fmt.Errorf("the AWS configuration does not load: %w", err)
	}
	if c, err := retrieve(ctx, cfg.Credentials); err == nil {
		return "AWS " + c.Source, "", nil
	}
	if a.creds == nil {
		return local, "", errors.New("no AWS credentials in " + local)
	}
	c, err := retrieve(ctx, a.creds)
	if err != nil {
		return local + " and the instance metadata endpoint", "",
			fmt.Errorf("no AWS credentials in %s, and the instance metadata endpoint did not give any within %v", local, NetworkCheckTimeout)
	}
	return "AWS " + c.Source, "the AWS credentials come from " + c.Source + ", which needs the network (the instance or container metadata endpoint)", nil
}

// retrieve asks p for credentials within NetworkCheckTimeout.
func retrieve(ctx context.Context, p aws.CredentialsProvider) (aws.Credentials, error) {
	if p == nil {
		return aws.Credentials{}, errors.New("no provider")
	}
	ctx, cancel := context.WithTimeout(ctx, NetworkCheckTimeout)
	defer cancel()
	return p.Retrieve(ctx)
}

// check finds Google application default credentials in
// GOOGLE_APPLICATION_CREDENTIALS's file or gcloud's, else on the metadata
// server within NetworkCheckTimeout. A file that is there must parse.
func (a *googleAuth) check(ctx context.Context) (string, string, error) {
	if f := os.Getenv("GOOGLE_APPLICATION_CREDENTIALS"); f != "" {
		return "GOOGLE_APPLICATION_CREDENTIALS (" + f + ")", "", googleFile(ctx, f)
	}
	gcloud := filepath.Join(cmp.Or(os.Getenv("CLOUDSDK_CONFIG"), filepath.Join(os.Getenv("HOME"), ".config", "gcloud")), "application_default_credentials.json")
	if _, err := os.Stat(gcloud); err == nil {
		return "gcloud's " + gcloud, "", googleFile(ctx, gcloud)
	}
	host := cmp.Or(os.Getenv("GCE_METADATA_HOST"), "169.254.169.254")
	src := "GOOGLE_APPLICATION_CREDENTIALS, " + gcloud + " and the metadata server " + host
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/computeMetadata/v1/instance/service-accounts/default/email", nil)
	if err != nil {
		return src, "", fmt.Errorf("GCE_METADATA_HOST %q: %w", host, err)
	}
	req.Header.Set("Metadata-Flavor", "Google")
	resp, err := (&http.Client{Timeout: NetworkCheckTimeout}).Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		return src, "", fmt.Errorf("no Google application default credentials: GOOGLE_APPLICATION_CREDENTIALS is not set, %s is not there, and the metadata server %s did not answer within %v", gcloud, host, NetworkCheckTimeout)
	}
	return "the metadata server " + host, "the Google credentials come from the metadata server " + host + ", which needs the network", nil
}

// googleFile parses a Google credentials file (no token is fetched).
func googleFile(ctx context.Context, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("the Google credentials file cannot be read: %w", err)
	}
	if _, err := google.CredentialsFromJSON(ctx, b, googleScope); err != nil {
		return fmt.Errorf("the Google credentials file %s does not parse: %w", path, err)
	}
	return nil
}

// check runs the token helper once.
func (a *commandAuth) check(ctx context.Context) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, commandCheckTimeout)
	defer cancel()
	src := "the command " + a.argv[0]
	if _, err := a.token(ctx); err != nil {
		return src, "", err
	}
	return src, "", nil
}

// authSource names where authorizer a looks for its credentials, for the
// log line of a failure.
func authSource(a authorizer) string {
	switch a := a.(type) {
	case *sigv4Auth:
		return "the AWS SDK's default chain (environment, shared files, web identity, container and instance roles)"
	case *googleAuth:
		return "Google application default credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's file, the metadata server)"
	case *commandAuth:
		return "the command " + a.argv[0]
	case *azureAuth:
		return "azidentity's default Azure credential (environment, workload identity, managed identity, Azure CLI, Azure Developer CLI, Azure PowerShell)"
	}
	return "a static key"
}
