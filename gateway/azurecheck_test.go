package gateway

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// closedURL is an http URL on a loopback port nothing listens on.
func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + ln.Addr().String() + "/msi/token"
	_ = ln.Close()
	return u
}

// appServiceIdentity is an App Service managed identity endpoint
// (IDENTITY_ENDPOINT with IDENTITY_HEADER) that gives a token to requests
// with the header; it records the resource each asked for.
func appServiceIdentity(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var resources []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Identity-Header") != "app-service-secret" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		resources = append(resources, r.URL.Query().Get("resource"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"access_token": "mi-token", "token_type": "Bearer",
			"expires_on": strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10), "resource": r.URL.Query().Get("resource")})
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), resources...) }
}

// TestAzureCheck: CheckCredentials resolves an azure upstream's
// credentials as azidentity's default chain would find them: the local
// sources in its order, then the managed identity within
// NetworkCheckTimeout (a warning); none found is a problem naming every
// source looked at; one set but broken is a problem naming it.
func TestAzureCheck(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	bin := filepath.Join(dir, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for path, text := range map[string]string{tokenFile: "federated-jwt", filepath.Join(bin, "az"): "#!/bin/sh\nexit 1\n"} {
		if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mi, resources := appServiceIdentity(t)
	for _, tc := range []struct {
		name                    string
		env                     map[string]string
		source, problem, warned string
	}{
		{name: "nothing", problem: "no Azure credentials: AZURE_CLIENT_SECRET, AZURE_CLIENT_CERTIFICATE_PATH and AZURE_USERNAME are not set, " +
			"AZURE_FEDERATED_TOKEN_FILE is not set, no az on PATH, no azd on PATH, no pwsh on PATH, " +
			"the managed identity at IDENTITY_ENDPOINT http://127.0.0.1:"},
		{name: "a client secret", env: map[string]string{"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_CLIENT_SECRET": "s"},
			source: "the environment (AZURE_CLIENT_SECRET)"},
		{name: "a client secret without its tenant", env: map[string]string{"AZURE_CLIENT_ID": "c", "AZURE_CLIENT_SECRET": "s"},
			problem: "AZURE_CLIENT_SECRET is set but the environment's Azure credentials do not load: missing environment variable AZURE_TENANT_ID"},
		{name: "a certificate that is not there", env: map[string]string{"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_CLIENT_CERTIFICATE_PATH": filepath.Join(dir, "none.pem")},
			problem: "AZURE_CLIENT_CERTIFICATE_PATH is set but the environment's Azure credentials do not load"},
		{name: "workload identity", env: map[string]string{"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_FEDERATED_TOKEN_FILE": tokenFile},
			source: "workload identity (AZURE_FEDERATED_TOKEN_FILE " + tokenFile + ")"},
		{name: "workload identity without its file", env: map[string]string{"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c", "AZURE_FEDERATED_TOKEN_FILE": filepath.Join(dir, "none")},
			problem: "workload identity's token file " + filepath.Join(dir, "none") + " cannot be read"},
		{name: "the Azure CLI", env: map[string]string{"PATH": bin}, source: "the Azure CLI (" + filepath.Join(bin, "az") + ")"},
		{name: "the Azure CLI left out by AZURE_TOKEN_CREDENTIALS", env: map[string]string{"PATH": bin, "AZURE_TOKEN_CREDENTIALS": "prod"},
			problem: "no Azure credentials: AZURE_TOKEN_CREDENTIALS=prod selects: AZURE_CLIENT_SECRET, AZURE_CLIENT_CERTIFICATE_PATH and AZURE_USERNAME are not set, AZURE_FEDERATED_TOKEN_FILE is not set, the managed identity at"},
		{name: "a managed identity", env: map[string]string{"IDENTITY_ENDPOINT": mi.URL + "/msi/token", "IDENTITY_HEADER": "app-service-secret"},
			source: "the managed identity at IDENTITY_ENDPOINT " + mi.URL + "/msi/token", warned: "which needs the network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			isolateAzure(t)
			t.Setenv("IDENTITY_ENDPOINT", closedURL(t)) // no instance metadata endpoint is asked
			t.Setenv("IDENTITY_HEADER", "app-service-secret")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			gw, err := New(azureEntraConfig("https://my-resource.openai.azure.com", "", ""), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer gw.Close()
			checks := gw.CheckCredentials(context.Background())
			if len(checks) != 1 {
				t.Fatalf("checks %+v", checks)
			}
			c := checks[0]
			t.Logf("%+v", c)
			if c.Path != "upstreams[0].auth" || c.Upstream != "azure" || !strings.HasPrefix(c.Problem, tc.problem) || (tc.problem == "") != (c.Problem == "") ||
				!strings.HasPrefix(c.Source, tc.source) || !strings.Contains(c.Warning, tc.warned) || (tc.warned == "") != (c.Warning == "") {
				t.Fatalf("got %+v\nwant source %q, problem %q, warning %q", c, tc.source, tc.problem, tc.warned)
			}
		})
	}
	if got := resources(); len(got) != 1 || got[0] != "https://cognitiveservices.azure.com" {
		t.Errorf("the managed identity was asked for %v, want Azure OpenAI's resource once", got)
	}
}
