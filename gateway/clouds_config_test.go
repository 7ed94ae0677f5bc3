package gateway

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// cloudsConfig is docs/gateway.md's clouds example: a Claude model with
// Bedrock and Vertex backups, a GPT model with an Azure backup and
// Bedrock's OpenAI-compatible endpoint.
const cloudsConfig = `
upstreams:
  - {name: anthropic, api: anthropic, base_url: "https://api.anthropic.com", api_key_env: ANTHROPIC_API_KEY}
  - {name: bedrock, api: bedrock, region: us-east-1}
  - {name: vertex, api: vertex, region: us-east5, project: my-project}
  - name: openai
    base_url: https://api.openai.com/v1
    api_key_env: OPENAI_API_KEY
  - name: azure
    base_url: https://my-resource.openai.azure.com/openai/v1
    api_key_env: AZURE_OPENAI_API_KEY
    auth: {type: api-key}
  - name: bedrock-openai
    base_url: https://bedrock-runtime.us-west-2.amazonaws.com/openai/v1
    api_key_env: AWS_BEARER_TOKEN_BEDROCK
  - name: internal
    base_url: https://llm.internal.example/v1
    auth: {type: command, command: [get-llm-token, --audience, gateway], ttl: 10m}
models:
  - name: claude-sonnet-4-5
    primary: anthropic/claude-sonnet-4-5
    chain: [bedrock/us.anthropic.claude-sonnet-4-5-20250929-v1:0, vertex/claude-sonnet-4-5@20250929]
  - name: gpt-4.1
    primary: openai/gpt-4.1
    chain: [azure/my-gpt-4-1-deployment, bedrock-openai/openai.gpt-oss-120b-1:0, internal/gpt-4.1]
`

func TestCloudsConfig(t *testing.T) {
	c, err := ParseConfig([]byte(cloudsConfig))
	if err != nil {
		t.Fatal(err)
	}
	u := c.Upstreams
	if u[1].API != APIBedrock || u[1].Region != "us-east-1" || u[2].Project != "my-project" || u[4].Auth.Type != AuthAPIKey ||
		u[6].Auth.Type != AuthCommand || len(u[6].Auth.Command) != 3 || u[6].Auth.TTL != 10*time.Minute {
		t.Fatalf("decoded %+v", u)
	}
	// Defaults: base URLs from the region, each api's auth type.
	for _, tc := range []struct {
		up              Upstream
		base, auth, hdr string
	}{
		{u[1], "https://bedrock-runtime.us-east-1.amazonaws.com", AuthSigV4, ""},
		{u[2], "https://us-east5-aiplatform.googleapis.com", AuthGoogle, ""},
		{Upstream{API: APIVertex, Region: "global", Project: "p"}, "https://aiplatform.googleapis.com", AuthGoogle, ""},
		{u[0], "", AuthXAPIKey, "X-Api-Key"},
		{u[4], "", AuthAPIKey, "Api-Key"},
		{u[5], "", AuthBearer, "Authorization"},
	} {
		if cl := newCloud(tc.up); cl != nil && cl.base != tc.base {
			t.Errorf("%s: base %s, want %s", tc.up.Name, cl.base, tc.base)
		}
		if authType(tc.up) != tc.auth || keyHeaders[authType(tc.up)] != tc.hdr {
			t.Errorf("%s: auth %s, want %s", tc.up.Name, authType(tc.up), tc.auth)
		}
	}
}

func TestCloudsConfigProblems(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"bedrock without region, vertex without region and project", `
upstreams: [{name: b, api: bedrock}, {name: v, api: vertex}, {name: o, base_url: "https://x/v1", project: p}]
models: [{name: m, primary: b/x}]`, []string{
			"upstreams[0].region: required for api bedrock", "upstreams[1].region: required for api vertex",
			"upstreams[1].project: required for api vertex", "upstreams[2].project: is for api vertex only"}},
		{"bad auth keys", `
upstreams:
  - {name: a, base_url: "https://x/v1", auth: {type: kerberos}}
  - {name: b, base_url: "https://x/v1", auth: {type: command}}
  - {name: c, api: bedrock, region: us-east-1, api_key_env: K}
  - {name: d, base_url: "https://x/v1", auth: {type: bearer, command: [x]}}
  - {name: e, base_url: "https://x/v1", auth: {type: command, command: [x], ttl: -1s, scope: y}}
  - {name: f, api: vertex, region: r, project: p, api_key_env: K}
models: [{name: m, primary: a/x}]`, []string{
			`upstreams[0].auth.type: "kerberos" is not bearer, x-api-key, api-key, sigv4, google, azure or command`,
			"upstreams[1].auth.command: required for auth type command",
			"upstreams[2].api_key_env: is not used with auth type sigv4",
			"upstreams[3].auth: type bearer takes its key from api_key_env only",
			"upstreams[4].auth.ttl", `upstreams[4].auth.scope`,
			"upstreams[5].api_key_env: is not used with auth type google"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.yaml))
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
}

func TestCloudBodyRules(t *testing.T) {
	bedrock := newCloud(Upstream{API: APIBedrock, Region: "us-east-1"})
	vertex := newCloud(Upstream{API: APIVertex, Region: "us-east5", Project: "p"})
	in := `{ "model" : "m", "stream":true, "max_tokens":5,"anthropic_version":"x","messages":[{"role":"user","content":"a \"model\": b"}] }`
	betas := http.Header{"Anthropic-Beta": {"claude-code-20250219,interleaved-thinking-2025-05-14", "oauth-2025-04-20, context-1m-2025-08-07"}}
	for _, tc := range []struct {
		name string
		c    *cloud
		w    *endpoint
		h    http.Header
		want string
	}{
		{"bedrock", bedrock, messagesEndpoint, betas, `{"anthropic_version":"bedrock-2023-05-31","anthropic_beta":["interleaved-thinking-2025-05-14","context-1m-2025-08-07"],"max_tokens":5,"messages":[{"role":"user","content":"a \"model\": b"}]}`},
		{"bedrock without betas", bedrock, messagesEndpoint, http.Header{"Anthropic-Beta": {"claude-code-20250219"}}, `{"anthropic_version":"bedrock-2023-05-31","max_tokens":5,"messages":[{"role":"user","content":"a \"model\": b"}]}`},
		{"vertex", vertex, messagesEndpoint, betas, `{"anthropic_version":"vertex-2023-10-16","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"a \"model\": b"}]}`},
		{"vertex count-tokens", vertex, countTokensEndpoint, nil, `{"anthropic_version":"vertex-2023-10-16","model" : "m","stream":true,"max_tokens":5,"messages":[{"role":"user","content":"a \"model\": b"}]}`},
	} {
		if got := string(tc.c.body([]byte(in), tc.h, tc.w)); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
	for model, want := range map[string]string{
		"anthropic.claude-3-haiku-20240307-v1:0":                              "/model/anthropic.claude-3-haiku-20240307-v1%3A0/invoke",
		"arn:aws:bedrock:us-east-1:123:inference-profile/us.anthropic.x-v1:0": "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123%3Ainference-profile%2Fus.anthropic.x-v1%3A0/invoke",
	} {
		u, _ := bedrock.url(model, messagesEndpoint, false)
		if u.EscapedPath() != want {
			t.Errorf("%s: %s, want %s", model, u.EscapedPath(), want)
		}
	}
}

// TestCloudsGuideConfigsParse: the configs of docs/gateway.md's clouds
// section are valid.
func TestCloudsGuideConfigsParse(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "gateway.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "## Backups on Bedrock, Vertex AI and Azure OpenAI")
	if !ok {
		t.Fatal("docs/gateway.md has no clouds section")
	}
	n := 0
	for _, block := range strings.Split(section, "```yaml\n")[1:] {
		yaml, _, _ := strings.Cut(block, "```")
		if _, err := ParseConfig([]byte(yaml)); err != nil {
			t.Errorf("docs/gateway.md:\n%s\n%v", yaml, err)
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d configs in the clouds section, want 3 (Claude's and OpenAI's backups, Azure's deployments)", n)
	}
}
