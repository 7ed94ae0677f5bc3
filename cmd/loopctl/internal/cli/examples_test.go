package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// examplesDir is the repository's examples folder.
var examplesDir = filepath.Join("..", "..", "..", "..", "examples")

// TestExamplesCheck: every config in examples/ passes `serve --check`
// with the environment it documents (keys in the variables and files it
// names, cloud credentials where the SDKs look, the az CLI on PATH), and
// each is linked from docs/gateway.md.
func TestExamplesCheck(t *testing.T) {
	home := isolateCredentials(t)
	for k, v := range map[string]string{"OPENAI_API_KEY": "sk-o", "ANTHROPIC_API_KEY": "sk-a", "AZURE_OPENAI_API_KEY": "az",
		"ANTHROPIC_API_KEY_B": "sk-b", "ANTHROPIC_API_KEY_C": "sk-c", "AZURE_OPENAI_API_KEY_EASTUS": "az-e", "AZURE_OPENAI_API_KEY_SWEDEN": "az-s",
		"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"} {
		t.Setenv(k, v)
	}
	sa := filepath.Join(home, "sa.json")
	bin := filepath.Join(home, "bin")
	keys := filepath.Join(home, "keys")
	for path, text := range map[string]string{
		sa:                               `{"type":"service_account","client_email":"a@p.iam.gserviceaccount.com","private_key":"-----BEGIN PRIVATE KEY-----\nMIIB\n-----END PRIVATE KEY-----\n","token_uri":"http://127.0.0.1:9/token"}`,
		filepath.Join(bin, "az"):         "#!/bin/sh\necho entra-token\n",
		filepath.Join(keys, "team-a"):    "sk-team-a\n",
		filepath.Join(keys, "oncall"):    "sk-oncall\n",
		filepath.Join(keys, "openai"):    "sk-o\n",
		filepath.Join(keys, "anthropic"): "sk-a\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", sa)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	files, err := filepath.Glob(filepath.Join(examplesDir, "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("examples: %v %v", files, err)
	}
	guide := readFile(t, "../docs/gateway.md")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The fleet's keys are mounted at /etc/loopctl/keys: here, a folder of the test's.
		cfg := writeConfig(t, strings.ReplaceAll(string(b), "/etc/loopctl/keys", keys))
		if code, out, errs := run(t, "serve", "--check", "--config", cfg); code != ExitOK || errs != "" {
			t.Errorf("%s: exit %d\n%s%s", filepath.Base(f), code, out, errs)
		}
		if !strings.Contains(guide, "(../examples/"+filepath.Base(f)+")") {
			t.Errorf("docs/gateway.md does not link examples/%s", filepath.Base(f))
		}
	}
}
