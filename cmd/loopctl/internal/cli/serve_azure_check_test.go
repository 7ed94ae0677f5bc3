package cli

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const azureEntraUpstreams = `upstreams:
  - {name: openai, base_url: "https://api.openai.com/v1", api_key_env: OPENAI_API_KEY}
  - name: azure-entra
    base_url: https://my-resource.openai.azure.com
    api_version: 2024-10-21
    auth: {type: azure}
models:
  - {name: gpt-4o, primary: openai/gpt-4o, chain: [azure-entra/my-gpt-4o]}
`

// isolateAzure unsets azidentity's variables and empties PATH of the
// Azure tools; the managed identity is an App Service endpoint on a closed
// loopback port (the instance metadata endpoint is never asked).
func isolateAzure(t *testing.T) {
	t.Helper()
	for _, k := range []string{"AZURE_TENANT_ID", "AZURE_CLIENT_ID", "AZURE_CLIENT_SECRET", "AZURE_CLIENT_CERTIFICATE_PATH",
		"AZURE_USERNAME", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_TOKEN_CREDENTIALS", "IDENTITY_SERVER_THUMBPRINT", "IMDS_ENDPOINT", "MSI_ENDPOINT"} {
		t.Setenv(k, "")
		_ = os.Unsetenv(k)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("IDENTITY_ENDPOINT", "http://"+ln.Addr().String()+"/msi/token")
	_ = ln.Close()
	t.Setenv("IDENTITY_HEADER", "h")
	t.Setenv("PATH", t.TempDir())
	t.Setenv("OPENAI_API_KEY", "sk-o")
}

// TestCheckAzureCredentials: serve --check resolves an azure upstream's
// credentials: none is a problem naming the upstream and every source
// looked at (exit 2); the Azure CLI on PATH passes; a managed identity
// passes with a warning (it needs the network).
func TestCheckAzureCredentials(t *testing.T) {
	isolateAzure(t)
	cfg := writeConfig(t, azureEntraUpstreams)
	code, out, errs := run(t, "serve", "--check", "--config", cfg)
	t.Logf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	if code != ExitUsage || strings.Contains(out, "OK") {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"1 problem(s)", "upstreams[1].auth: upstream azure-entra: no Azure credentials: AZURE_CLIENT_SECRET, AZURE_CLIENT_CERTIFICATE_PATH and AZURE_USERNAME are not set",
		"AZURE_FEDERATED_TOKEN_FILE is not set, no az on PATH", "the managed identity at IDENTITY_ENDPOINT http://127.0.0.1:", "did not give a token within 1s"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}

	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "az"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	if code, out, errs := run(t, "serve", "--check", "--config", cfg); code != ExitOK || !strings.Contains(out, "OK") || errs != "" {
		t.Fatalf("with az on PATH: exit %d\n%s%s", code, out, errs)
	}

	t.Setenv("PATH", t.TempDir())
	mi := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"access_token": "mi", "token_type": "Bearer",
			"expires_on": strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10), "resource": r.URL.Query().Get("resource")})
	}))
	defer mi.Close()
	t.Setenv("IDENTITY_ENDPOINT", mi.URL+"/msi/token")
	code, out, errs = run(t, "serve", "--check", "--config", cfg)
	if want := "warning: upstreams[1].auth (upstream azure-entra): the Azure token comes from the managed identity at IDENTITY_ENDPOINT " + mi.URL + "/msi/token, which needs the network"; code != ExitOK || !strings.Contains(out, "OK") || !strings.Contains(errs, want) {
		t.Fatalf("with a managed identity: exit %d\n%s%s\nwant %q", code, out, errs, want)
	}
}
