package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// isolateCredentials points every credential source at nothing: no AWS
// or Google variables, empty HOME, metadata endpoints on a closed port.
func isolateCredentials(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	for k, v := range map[string]string{
		"HOME": home, "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_SESSION_TOKEN": "", "AWS_PROFILE": "",
		"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(home, "none"), "AWS_CONFIG_FILE": filepath.Join(home, "none"),
		"AWS_WEB_IDENTITY_TOKEN_FILE": "", "AWS_CONTAINER_CREDENTIALS_FULL_URI": "", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://" + closed, "AWS_EC2_METADATA_DISABLED": "",
		"GOOGLE_APPLICATION_CREDENTIALS": "", "CLOUDSDK_CONFIG": "", "GCE_METADATA_HOST": closed,
	} {
		t.Setenv(k, v)
	}
	return home
}

const cloudUpstreams = `upstreams:
  - {name: bedrock, api: bedrock, region: us-east-1}
  - {name: vertex, api: vertex, region: us-east5, project: p}
  - {name: helper, api: openai, base_url: "http://127.0.0.1:9/v1", auth: {type: command, command: [%s]}}
models:
  - {name: smart, primary: bedrock/anthropic.claude-sonnet-4-5, chain: [vertex/claude-sonnet-4-5, helper/gpt-4o]}
`

// TestCheckFindsMissingCredentials: serve --check resolves each
// upstream's credentials and names those it cannot find (exit 2), each
// with the sources it looked at; found ones pass (docs/GATEWAY.md §10.1).
func TestCheckFindsMissingCredentials(t *testing.T) {
	isolateCredentials(t)
	cfg := writeConfig(t, strings.Replace(cloudUpstreams, "%s", "false", 1))
	code, out, errs := run(t, "serve", "--check", "--config", cfg)
	t.Logf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	if code != ExitUsage || strings.Contains(out, "OK") {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"3 problem(s)",
		"upstreams[0].auth: upstream bedrock: no AWS credentials in the environment (AWS_ACCESS_KEY_ID)", "instance metadata endpoint did not give any within 1s",
		"upstreams[1].auth: upstream vertex: no Google application default credentials", "metadata server",
		"upstreams[2].auth: upstream helper: the auth command failed: false exited with 1"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}

	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	key := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(key, []byte(`{"type":"service_account","client_email":"a@p.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n","token_uri":"http://127.0.0.1:9/token"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", key)
	cfg = writeConfig(t, strings.Replace(cloudUpstreams, "%s", "echo, tok", 1))
	if code, out, errs := run(t, "serve", "--check", "--config", cfg); code != ExitOK || !strings.Contains(out, "OK") || errs != "" {
		t.Fatalf("with every credential: exit %d\n%s%s", code, out, errs)
	}
}

// TestCheckWarnsOfNetworkCredentials: credentials found only through an
// instance metadata endpoint pass with a warning (they need the network
// where the gateway runs).
func TestCheckWarnsOfNetworkCredentials(t *testing.T) {
	isolateCredentials(t)
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPut && r.URL.Path == "/latest/api/token":
			w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "21600")
			_, _ = w.Write([]byte("imds-token"))
		case r.URL.Path == "/latest/meta-data/iam/security-credentials/":
			_, _ = w.Write([]byte("role"))
		case r.URL.Path == "/latest/meta-data/iam/security-credentials/role":
			_, _ = w.Write([]byte(`{"Code":"Success","AccessKeyId":"AKID","SecretAccessKey":"s","Token":"t","Expiration":"2099-01-01T00:00:00Z"}`))
		case r.URL.Path == "/computeMetadata/v1/instance/service-accounts/default/email" && r.Header.Get("Metadata-Flavor") == "Google":
			_, _ = w.Write([]byte("sa@p.iam.gserviceaccount.com"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer imds.Close()
	t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
	t.Setenv("GCE_METADATA_HOST", strings.TrimPrefix(imds.URL, "http://"))
	cfg := writeConfig(t, strings.Replace(cloudUpstreams, "%s", "echo, tok", 1))
	code, out, errs := run(t, "serve", "--check", "--config", cfg)
	t.Logf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	if code != ExitOK || !strings.Contains(out, "OK") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"warning: upstreams[0].auth (upstream bedrock): the AWS credentials come from EC2RoleProvider", "warning: upstreams[1].auth (upstream vertex): the Google credentials come from the metadata server"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
}
