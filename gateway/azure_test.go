package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/loopctl/loopctl-go/llmtest"
)

// TestAzureDeployments: an openai upstream with api_version reaches a
// local Azure-style fake as Azure OpenAI's deployments are called: the
// model is the deployment in the path, api-version in the query, the key
// in api-key; chat, embeddings and Responses each on Azure's path.
func TestAzureDeployments(t *testing.T) {
	oa := llmtest.NewOpenAIHandler(llmtest.Always(llmtest.Text("from azure")))
	var mu sync.Mutex
	var seen []string
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		if r.Header.Get("Api-Key") != "az-key" || r.URL.Query().Get("api-version") != "2024-10-21" || r.Header.Get("Authorization") != "" {
			http.Error(w, `{"error":{"code":"401","message":"Access denied"}}`, http.StatusUnauthorized)
			return
		}
		// The fake serves what the OpenAI fake serves on its own paths.
		switch {
		case strings.HasPrefix(r.URL.Path, "/openai/deployments/my-gpt-4o/"):
			r.URL.Path = "/v1/" + strings.TrimPrefix(r.URL.Path, "/openai/deployments/my-gpt-4o/")
		case r.URL.Path == "/openai/responses":
			r.URL.Path = "/v1/responses"
		default:
			http.NotFound(w, r)
			return
		}
		r.URL.RawQuery = ""
		oa.ServeHTTP(w, r)
	}))
	t.Cleanup(fake.Close)
	srv := cloudGateway(t, Config{
		Upstreams: []Upstream{{Name: "azure", BaseURL: fake.URL, APIVersion: "2024-10-21", APIKey: "az-key", Auth: Auth{Type: AuthAPIKey}}},
		Models:    []Model{{Name: "m", Primary: "azure/my-gpt-4o"}},
	}, Options{})
	for _, tc := range []struct{ path, body, want string }{
		{"/v1/chat/completions", chatBody("m", false), "/openai/deployments/my-gpt-4o/chat/completions?api-version=2024-10-21"},
		{"/v1/chat/completions", chatBody("m", true), "/openai/deployments/my-gpt-4o/chat/completions?api-version=2024-10-21"},
		{"/v1/embeddings", `{"model":"m","input":"hi"}`, "/openai/deployments/my-gpt-4o/embeddings?api-version=2024-10-21"},
		{"/v1/responses", `{"model":"m","input":"hi"}`, "/openai/responses?api-version=2024-10-21"},
	} {
		mu.Lock()
		seen = nil
		mu.Unlock()
		if a := postTo(t, srv, tc.path+"?x=1", tc.body); a.status != 200 {
			t.Fatalf("%s: %d %s", tc.path, a.status, a.body)
		}
		mu.Lock()
		got := strings.Join(seen, " ")
		mu.Unlock()
		if got != tc.want {
			t.Errorf("%s reached %q, want %q", tc.path, got, tc.want)
		}
	}
}

// TestAzureConfig: api_version is checked where it is given, and a
// base_url carrying ?api-version= is refused pointing at api_version.
func TestAzureConfig(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{`{name: a, base_url: "https://r.openai.azure.com/openai/deployments/x/chat/completions?api-version=2024-10-21"}`, "upstreams[0].base_url: \"https://r.openai.azure.com/openai/deployments/x/chat/completions?xxxxx\": Azure's api-version goes in the upstream's api_version"},
		{`{name: a, base_url: "https://r.openai.azure.com/openai/v1", api_version: 2024-10-21}`, "upstreams[0].base_url: \"https://r.openai.azure.com/openai/v1\": with api_version the base_url is the resource's"},
		{`{name: a, api: anthropic, base_url: "https://x", api_version: 2024-10-21}`, "upstreams[0].api_version: is for api openai"},
		{`{name: a, base_url: "https://r.openai.azure.com", api_version: "2024-10-21&x=1"}`, "upstreams[0].api_version: \"2024-10-21&x=1\" is not a version"},
	} {
		_, err := ParseConfig([]byte("upstreams:\n  - " + tc.yaml + "\nmodels:\n  - {name: m, primary: a/x}\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.yaml, err, tc.want)
		}
	}
	cfg, err := ParseConfig([]byte("upstreams:\n  - {name: a, base_url: \"https://r.openai.azure.com\", api_version: 2024-10-21, auth: {type: api-key}, api_key_env: AZURE_OPENAI_API_KEY}\nmodels:\n  - {name: m, primary: a/x}\n"))
	if err != nil || cfg.Upstreams[0].APIVersion != "2024-10-21" {
		t.Errorf("a good Azure upstream: %v %+v", err, cfg.Upstreams)
	}
}
