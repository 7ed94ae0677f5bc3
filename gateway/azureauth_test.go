package gateway

import (
	"bytes"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// azureEntraConfig is a gateway with model m on the resource's deployment
// my-gpt-4o with an Entra ID token (scope: "" the default), and a backup
// when backup is set.
func azureEntraConfig(resource, backup, scope string) Config {
	m := Model{Name: "m", Primary: "azure/my-gpt-4o"}
	ups := []Upstream{{Name: "azure", BaseURL: resource, APIVersion: "2024-10-21", Auth: Auth{Type: AuthAzure, Scope: scope}}}
	if backup != "" {
		m.Chain = []string{"backup/gpt-4o"}
		ups = append(ups, Upstream{Name: "backup", BaseURL: backup, APIKey: "sk-backup"})
	}
	return Config{Upstreams: ups, Models: []Model{m}}
}

// stepClock is a clock that starts at the real time (the SDK dates the
// tokens it gets with it) and moves only when told.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *stepClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestAzureEntraToken: auth type azure gets a token from azidentity's
// default chain (here the environment's client secret, against the local
// Entra fake), for Azure OpenAI's scope or the one configured, sends it as
// a bearer token, reuses it, and replaces it before it expires.
func TestAzureEntraToken(t *testing.T) {
	for _, tc := range []struct{ scope, want string }{
		{"", "https://cognitiveservices.azure.com/.default"},
		{"https://ai.azure.com/.default", "https://ai.azure.com/.default"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			entra := newEntraFake(t)
			entra.useEnv(t)
			// 4 minutes: less than MSAL's own 5-minute margin, so MSAL's
			// cache never serves it again and every reuse is the gateway's.
			entra.expiresIn = 240
			res := newEntraResource(t, entra, llmtest.Always(llmtest.Text("from azure")))
			clock := &stepClock{t: time.Now()}
			srv := cloudGateway(t, azureEntraConfig(res.URL, "", tc.scope), Options{Transport: entra.transport(), Now: clock.now})
			for i, body := range []string{chatBody("m", false), chatBody("m", true), chatBody("m", false)} {
				if a := postTo(t, srv, "/v1/chat/completions", body); a.status != 200 || !strings.Contains(a.body, "from azure") {
					t.Fatalf("request %d: %d %s", i, a.status, a.body)
				}
			}
			issued, scopes := entra.state()
			// MSAL adds OpenID's own scopes after the resource's.
			if len(issued) != 1 || strings.Fields(scopes[0])[0] != tc.want {
				t.Fatalf("tokens %v for scopes %v: want one token, reused, for %s", issued, scopes, tc.want)
			}
			// Past half its life (2 of 4 minutes), before its expiry: the
			// next request gets a new token, and the resource takes only
			// the newest.
			clock.add(150 * time.Second)
			if a := postTo(t, srv, "/v1/chat/completions", chatBody("m", false)); a.status != 200 {
				t.Fatalf("after 150s: %d %s", a.status, a.body)
			}
			issued, _ = entra.state()
			seen, unknown := res.headers()
			want := []string{"Bearer entra-1", "Bearer entra-1", "Bearer entra-1", "Bearer entra-2"}
			if len(issued) != 2 || unknown != 0 || strings.Join(seen, ",") != strings.Join(want, ",") {
				t.Fatalf("tokens %v; the resource saw %q (%d not the newest), want %q", issued, seen, unknown, want)
			}
		})
	}
}

// TestAzureTokenFailure: a token the credential cannot get is that
// upstream's failure: the request goes to the next chain entry at once,
// with no same-model retry (one token request per client request, the
// resource never asked), logged once per minute with the source tried and
// the token endpoint's status, never its body.
func TestAzureTokenFailure(t *testing.T) {
	entra := newEntraFake(t)
	entra.useEnv(t)
	entra.fail = 401
	res := newEntraResource(t, entra, llmtest.Always(llmtest.Text("from azure")))
	backup := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("from backup")))
	t.Cleanup(backup.Close)
	var mu sync.Mutex
	var logs bytes.Buffer
	clock := &stepClock{t: time.Now()}
	cfg := azureEntraConfig(res.URL, backup.BaseURL(), "")
	cfg.Retry = Retry{MaxRetries: 3, BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}
	cfg.Models[0].Breaker = Breaker{TripThreshold: 100}
	gw, err := New(cfg, Options{Transport: entra.transport(), Now: clock.now, Rand: func() float64 { return 0 },
		Logger: slog.New(slog.NewJSONHandler(&lockedWriter{mu: &mu, w: &logs}, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(func() { srv.Close(); gw.Close() })
	for i := 1; i <= 3; i++ {
		a := postTo(t, srv, "/v1/chat/completions", chatBody("m", false))
		if a.status != 200 || a.header.Get("X-Loopctl-Model") != "backup/gpt-4o" {
			t.Fatalf("request %d: %d from %s: %s", i, a.status, a.header.Get("X-Loopctl-Model"), a.body)
		}
		if _, scopes := entra.state(); len(scopes) != i {
			t.Fatalf("after %d requests, %d token requests: a credential failure was retried", i, len(scopes))
		}
	}
	if seen, _ := res.headers(); len(seen) != 0 {
		t.Fatalf("the resource was asked %d times without a token", len(seen))
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	for _, want := range []string{`"upstream":"azure"`, `"source":"azidentity's default Azure credential`,
		"the token endpoint answered 401 (" + entraHost + "/tenant-1/oauth2/v2.0/token): invalid_client"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, `"msg":"upstream auth failed"`); n != 1 || strings.Contains(out, "secret-in-body") || strings.Contains(out, entra.secret) {
		t.Fatalf("3 failures in a minute logged %d times (or with the endpoint's body or the secret):\n%s", n, out)
	}
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// TestAzureNoCredentials: with no source of the chain set up, the
// upstream fails at once with the sources tried, and the backup serves.
func TestAzureNoCredentials(t *testing.T) {
	isolateAzure(t)
	t.Setenv("AZURE_TOKEN_CREDENTIALS", "dev") // the developer tools only: none is on PATH
	backup := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("from backup")))
	t.Cleanup(backup.Close)
	var mu sync.Mutex
	var logs bytes.Buffer
	srv := cloudGateway(t, azureEntraConfig("http://127.0.0.1:9", backup.BaseURL(), ""),
		Options{Logger: slog.New(slog.NewJSONHandler(&lockedWriter{mu: &mu, w: &logs}, nil))})
	if a := postTo(t, srv, "/v1/chat/completions", chatBody("m", false)); a.status != 200 || a.header.Get("X-Loopctl-Model") != "backup/gpt-4o" {
		t.Fatalf("%d from %s: %s", a.status, a.header.Get("X-Loopctl-Model"), a.body)
	}
	mu.Lock()
	out := logs.String()
	mu.Unlock()
	t.Log(out)
	for _, want := range []string{"no Microsoft Entra ID token for https://cognitiveservices.azure.com/.default: DefaultAzureCredential: failed to acquire a token.",
		"Attempted credentials: AzureCLICredential: executable not found on path; AzureDeveloperCLICredential: executable not found on path; AzurePowerShellCredential"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q", want)
		}
	}
}
