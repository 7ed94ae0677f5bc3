package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// dummyGoogleKey is a service-account key file that parses (no token is
// ever fetched with it: --check does not call the network for it).
const dummyGoogleKey = `{"type":"service_account","client_email":"a@p.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n","token_uri":"http://127.0.0.1:9/token"}`

// TestExamples: every config in examples/ passes `serve --check` with the
// variables and credentials its comment names set to dummies, and every one
// is in this table (a new example gets a row, and so a check).
func TestExamples(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "examples")
	cases := []struct {
		file   string
		env    []string // the variables it names
		google bool     // needs Google application default credentials
		models string
	}{
		{"cross-wire-chain.yaml", []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}, false, "smart"},
		{"claude-code-clouds.yaml", []string{"ANTHROPIC_API_KEY", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}, true, "claude-sonnet-4-5"},
		{"openai-azure.yaml", []string{"OPENAI_API_KEY", "AZURE_OPENAI_API_KEY"}, false, "gpt-4.1, embed"},
		{"fleet-redis.yaml", []string{"LOOPCTL_KEY_TEAM_A", "LOOPCTL_ADMIN_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"}, false, "smart"},
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) != len(cases) {
		t.Fatalf("examples/ holds %d configs (%v), the table %d: give each a row", len(files), err, len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), "# ") || !strings.Contains(string(b), "Use it when") {
				t.Errorf("%s does not open with a comment saying when to use it", tc.file)
			}
			isolateExampleCredentials(t)
			code, out, errs := run(t, "serve", "--check", "--config", path)
			if code != ExitUsage || !strings.Contains(errs, "problem") {
				t.Errorf("without its variables: exit %d, stderr %q; want 2 naming the problems", code, errs)
			}
			for _, k := range tc.env {
				t.Setenv(k, "dummy-"+strings.ToLower(k))
			}
			if tc.google {
				key := filepath.Join(t.TempDir(), "sa.json")
				if err := os.WriteFile(key, []byte(dummyGoogleKey), 0o600); err != nil {
					t.Fatal(err)
				}
				t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", key)
			}
			code, out, errs = run(t, "serve", "--check", "--config", path)
			if code != ExitOK || errs != "" || !strings.Contains(out, ": OK ("+strconv.Itoa(len(strings.Split(tc.models, ", ")))+" models: "+tc.models+";") {
				t.Fatalf("serve --check: exit %d\nstdout: %s\nstderr: %s", code, out, errs)
			}
		})
	}
}

// isolateExampleCredentials clears every variable an example may name and
// the cloud credentials' other sources (HOME's files, the metadata
// endpoints on a closed port), so that only what the test sets is found.
func isolateExampleCredentials(t *testing.T) {
	home := t.TempDir()
	for _, k := range []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AZURE_OPENAI_API_KEY", "LOOPCTL_KEY_TEAM_A", "LOOPCTL_ADMIN_KEY",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", home)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "none"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("GCE_METADATA_HOST", "127.0.0.1:9")
}
