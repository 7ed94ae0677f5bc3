package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/loopctl/loopctl-go/llmtest"
)

// GATEWAY §10 through the gateway, against the local fakes of
// clouds_fakes_test.go and vertex_fake_test.go.

// cloudGateway serves cfg (a retry ladder without retries added) on a
// local server.
func cloudGateway(t *testing.T, cfg Config, opt Options) *httptest.Server {
	t.Helper()
	cfg.Retry = Retry{MaxRetries: -1, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}
	if opt.Rand == nil {
		opt.Rand = func() float64 { return 0 }
	}
	gw, err := New(cfg, opt)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	fastRateLimits(gw)
	srv := httptest.NewServer(gw)
	t.Cleanup(func() { srv.Close(); gw.Close() })
	return srv
}

// postTo posts body to the gateway's path with headers hdr (name, value
// pairs) and returns the answer.
func postTo(t *testing.T, srv *httptest.Server, path, body string, hdr ...string) answer {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// messagesBody is a Messages request for model.
func messagesBody(model string, stream bool) string {
	return `{"model":` + string(quote(model)) + `,"max_tokens":64,"stream":` + map[bool]string{true: "true", false: "false"}[stream] +
		`,"messages":[{"role":"user","content":"hi"}]}`
}

func TestSigV4VerifierCatchesEveryChange(t *testing.T) {
	body := []byte(`{"anthropic_version":"bedrock-2023-05-31"}`)
	sign := func(region, service string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "http://bedrock.test/model/claude/invoke", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		sum := sha256.Sum256(body)
		if err := v4.NewSigner().SignHTTP(context.Background(), fakeAWS, r, hex.EncodeToString(sum[:]), service, region, time.Now()); err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		name   string
		req    *http.Request
		body   string
		change func(r *http.Request)
		ok     bool
	}{
		{"as signed", sign("us-east-1", "bedrock"), string(body), nil, true},
		{"wrong region", sign("us-west-2", "bedrock"), string(body), nil, false},
		{"wrong service", sign("us-east-1", "s3"), string(body), nil, false},
		{"wrong host", sign("us-east-1", "bedrock"), string(body), func(r *http.Request) { r.Host = "evil.test" }, false},
		{"wrong body", sign("us-east-1", "bedrock"), `{"anthropic_version":"bedrock-2023-05-32"}`, nil, false},
		{"wrong path", sign("us-east-1", "bedrock"), string(body), func(r *http.Request) { r.URL.Path = "/model/other/invoke" }, false},
		{"a signed header changed", sign("us-east-1", "bedrock"), string(body), func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.change != nil {
				tc.change(tc.req)
			}
			err := verifySigV4(tc.req, []byte(tc.body), fakeAWS, "us-east-1", "bedrock")
			if (err == nil) != tc.ok {
				t.Errorf("verify: %v, want ok %v", err, tc.ok)
			}
		})
	}
}

// bedrockConfig is a gateway with model m: primary bedrock/<primary>, backup
// an/backup (Anthropic, healthy) when backup is set.
func bedrockConfig(bedrock, an string, region, primary string, backup bool) Config {
	m := Model{Name: "m", Primary: "bedrock/" + primary}
	if backup {
		m.Chain = []string{"an/backup"}
	}
	return Config{
		Upstreams: []Upstream{
			{Name: "bedrock", API: APIBedrock, Region: region, BaseURL: bedrock},
			{Name: "an", API: APIAnthropic, BaseURL: an, APIKey: "sk-an"},
		},
		Models: []Model{m},
	}
}

func TestBedrockServesMessagesAndTranslatedClients(t *testing.T) {
	useFakeAWS(t)
	br := newBedrockFake(t, "us-east-1", weather)
	an := llmtest.NewAnthropic(weather)
	t.Cleanup(an.Close)
	srv := cloudGateway(t, bedrockConfig(br.URL, an.BaseURL(), "us-east-1", "anthropic.claude-sonnet-4-5-20250929-v1:0", false), Options{})

	a := postTo(t, srv, "/v1/messages", messagesBody("m", false), "anthropic-beta", "claude-code-20250219, interleaved-thinking-2025-05-14", "anthropic-version", "2023-06-01")
	if a.status != 200 || !strings.Contains(a.body, "hello from b") {
		t.Fatalf("messages: %d %s", a.status, a.body)
	}
	s := postTo(t, srv, "/v1/messages", messagesBody("m", true))
	if s.status != 200 || !strings.Contains(s.body, "event: message_stop") || !strings.Contains(s.body, `"text":"from b"`) {
		t.Fatalf("messages stream: %d %s", s.status, s.body)
	}
	c := postTo(t, srv, "/v1/chat/completions", chatBody("m", true))
	if c.status != 200 || !strings.Contains(c.body, "data: [DONE]") || c.header.Get("X-Loopctl-Translated") != "chat->messages" {
		t.Fatalf("chat stream: %d %v %s", c.status, c.header, c.body)
	}
	reqs := br.log.all()
	if br.bad != 0 || len(reqs) != 3 {
		t.Fatalf("bedrock got %d requests, %d with a bad signature", len(reqs), br.bad)
	}
	want := []string{"/invoke", "/invoke-with-response-stream", "/invoke-with-response-stream"}
	for i, r := range reqs {
		if !strings.HasPrefix(r.path, "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/") || !strings.HasSuffix(r.path, want[i]) {
			t.Errorf("request %d: path %s, want the model path-escaped and %s", i, r.path, want[i])
		}
		if r.header.Get("Anthropic-Beta") != "" || r.header.Get("Anthropic-Version") != "" || r.header.Get("X-Api-Key") != "" {
			t.Errorf("request %d: headers %v: the version and betas go in the body, no key header", i, r.header)
		}
	}
	if betas, _ := json.Marshal(reqs[0].body["anthropic_beta"]); string(betas) != `["interleaved-thinking-2025-05-14"]` {
		t.Errorf("anthropic_beta %s, want only the flag on Bedrock's allow-list (body %v)", betas, reqs[0].body)
	}
}

func TestBedrockCountTokensIsEstimatedLocally(t *testing.T) {
	useFakeAWS(t)
	br := newBedrockFake(t, "us-east-1", weather)
	srv := cloudGateway(t, bedrockConfig(br.URL, br.URL, "us-east-1", "claude", false), Options{})
	a := postTo(t, srv, "/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hello there"}]}`)
	if a.status != 200 || !strings.Contains(a.body, "input_tokens") || len(br.log.all()) != 0 {
		t.Fatalf("count_tokens: %d %s, %d upstream requests", a.status, a.body, len(br.log.all()))
	}
}

func TestBedrockWrongRegionFailsSignature(t *testing.T) {
	useFakeAWS(t)
	br := newBedrockFake(t, "us-east-1", weather)
	an := llmtest.NewAnthropic(weather)
	t.Cleanup(an.Close)
	srv := cloudGateway(t, bedrockConfig(br.URL, an.BaseURL(), "eu-west-1", "claude", true), Options{})
	a := postTo(t, srv, "/v1/messages", messagesBody("m", false))
	if a.status != 200 || a.header.Get("X-Loopctl-Model") != "an/backup" || br.bad == 0 || len(br.log.all()) != 0 {
		t.Fatalf("got %d from %s, %d bad signatures: a signature for the wrong region must fail that upstream", a.status, a.header.Get("X-Loopctl-Model"), br.bad)
	}
}
