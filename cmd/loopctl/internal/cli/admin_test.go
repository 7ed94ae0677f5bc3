package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/llmtest"
)

// TestAdminArgs: what `loopctl admin` refuses before it sends anything, and
// the body it sends for each action.
func TestAdminArgs(t *testing.T) {
	env := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		code int
		body string // the POST body; "" for a GET
		want string // in stderr
	}{
		{args: nil, code: ExitUsage, want: "missing the action"},
		{args: []string{"freeze", "m"}, code: ExitUsage, want: `unknown action "freeze"`},
		{args: []string{"hold", "m"}, code: ExitUsage, want: "hold needs --ttl"},
		{args: []string{"hold", "--ttl", "1m"}, code: ExitUsage, want: "hold takes one model"},
		{args: []string{"disable", "m", "--ttl", "1m"}, code: ExitUsage, want: "disable needs --entry"},
		{args: []string{"breakers", "a", "b"}, code: ExitUsage, want: "at most one model"},
		{args: []string{"breakers", "--bogus"}, code: ExitUsage, want: "bogus"},
		{args: []string{"breakers"}},
		{args: []string{"--json", "breakers", "m"}},
		{args: []string{"hold", "smart", "--ttl", "10m", "--reason", "INC-42"}, body: `{"action":"hold","reason":"INC-42","ttl":"10m"}`},
		{args: []string{"release", "smart"}, body: `{"action":"release"}`},
		{args: []string{"reset", "smart"}, body: `{"action":"reset"}`},
		{args: []string{"disable", "smart", "--entry", "up/b", "--ttl", "1h"}, body: `{"action":"disable","entry":"up/b","ttl":"1h"}`},
		{args: []string{"enable", "--entry", "up/b", "smart"}, body: `{"action":"enable","entry":"up/b"}`},
	} {
		var stderr bytes.Buffer
		a, code, done := parseAdmin(tc.args, io.Discard, &stderr, env)
		if tc.code != 0 {
			if !done || code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("%q: exit %d (done %v), stderr %q; want %d with %q", tc.args, code, done, stderr.String(), tc.code, tc.want)
			}
			continue
		}
		if done {
			t.Errorf("%q: refused: %s", tc.args, stderr.String())
			continue
		}
		if a.url != "http://"+gateway.DefaultListen {
			t.Errorf("%q: url %s", tc.args, a.url)
		}
		if got := ""; a.action != "breakers" {
			if got = string(a.body()); got != tc.body {
				t.Errorf("%q: body %s, want %s", tc.args, got, tc.body)
			}
		}
	}
}

// adminReplica starts the real loopctl binary as `loopctl serve` with
// model m: up/a, then up/b and up/c, admin key "oncall" from
// LOOPCTL_TEST_ADMIN_KEY; redisURL "" for none. It returns the address
// once /readyz answers 200, and stop (SIGTERM, then the exit).
func adminReplica(t *testing.T, upURL, redisURL, prefix string) (addr string, stop func()) {
	t.Helper()
	cfg := writeConfig(t, fmt.Sprintf(`listen: 127.0.0.1:0
upstreams:
  - name: up
    base_url: %s
models:
  - name: m
    primary: up/a
    chain: [up/b, up/c]
    breaker:
      trip_threshold: 1
      recovery_timeout: 30s
      recovery_successes: 1
retry:
  max_retries: 0
admin_keys:
  - name: oncall
    key_env: LOOPCTL_TEST_ADMIN_KEY
store:
  prefix: %s
`, upURL, prefix))
	args := []string{"serve", "--config", cfg, "--log-format", "json", "--grace", "1s"}
	if redisURL != "" {
		args = append(args, "--redis", redisURL)
	}
	p := startLoopctl(t, nil, args...)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if code, _ := p.request(http.MethodGet, "/readyz", "", ""); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("loopctl serve on %s not ready within 5s: %s", p.addr, p.stderr)
		}
	}
	return p.addr, func() {
		p.signal(syscall.SIGTERM)
		if code := p.wait(5 * time.Second); code != 0 {
			t.Errorf("loopctl serve exited %d after SIGTERM: %s", code, p.stderr)
		}
	}
}

// hits counts the requests that reached each upstream model; "a" answers
// with status a (0: 200).
type hits struct {
	a, b, c atomic.Int32
	status  atomic.Int32
}

func (h *hits) script() llmtest.Script {
	return func(r llmtest.Request) llmtest.Reply {
		switch r.Model {
		case "a":
			h.a.Add(1)
			if s := h.status.Load(); s != 0 {
				return llmtest.Error(int(s))
			}
		case "b":
			h.b.Add(1)
		case "c":
			h.c.Add(1)
		}
		return llmtest.Text("from " + r.Model)
	}
}

// chat sends one request for m to addr and returns the upstream model that
// served it.
func chat(t *testing.T, addr string) string {
	t.Helper()
	res, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("request to %s: %d", addr, res.StatusCode)
	}
	return res.Header.Get("X-Loopctl-Model")
}

// admin runs the real binary as `loopctl admin args...` against addr (the
// key from LOOPCTL_ADMIN_KEY, as set) and returns its stdout.
func admin(t *testing.T, addr string, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(loopctlBinary(t), append([]string{"admin", "--url", "http://" + addr}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("loopctl admin %q: %v: %s", args, err, errb.String())
	}
	return out.String()
}

// viewOf reads GET /admin/breakers/m on addr through `loopctl admin --json`.
func viewOf(t *testing.T, addr string) gateway.BreakerView {
	t.Helper()
	var v gateway.BreakerView
	if err := json.Unmarshal([]byte(admin(t, addr, "--json", "breakers", "m")), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAdminWindowRow: one breaker's table shows the failure-rate window's
// rules in force (GATEWAY §9.1's thresholds, SEMANTICS §8), and no row while
// they are off.
func TestAdminWindowRow(t *testing.T) {
	for _, tc := range []struct {
		name string
		th   gateway.ThresholdsView
		want string // "": no window row
	}{
		{"off", gateway.ThresholdsView{}, ""},
		{"failure rate", gateway.ThresholdsView{FailureRate: 0.25, RateWindow: "30s", RateMinCalls: 20}, "failure_rate 0.25 over 30s (rate_min_calls 20)"},
		{"both rules", gateway.ThresholdsView{FailureRate: 0.5, SlowCallAfter: "1s", SlowCallRate: 0.3, RateWindow: "1m0s", RateMinCalls: 5},
			"failure_rate 0.5, slow_call_rate 0.3 after 1s over 1m0s (rate_min_calls 5)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			writeBreaker(&b, gateway.BreakerView{Model: "m", Thresholds: tc.th}, time.Now())
			row := ""
			for _, l := range strings.Split(b.String(), "\n") {
				if rest, ok := strings.CutPrefix(l, "window"); ok {
					row = strings.TrimSpace(rest)
				}
			}
			if row != tc.want {
				t.Errorf("window row %q, want %q; table:\n%s", row, tc.want, b.String())
			}
		})
	}
}

// TestAdminThroughBinary: a model tripped by scripted 503s on a real
// `loopctl serve` process shows why and until when it is open (open_until =
// trip + recovery_timeout ± 1 s); a write needs the admin key (401), a
// wrong body is a 400 naming its field, and a chain entry is disabled and
// enabled.
func TestAdminThroughBinary(t *testing.T) {
	t.Setenv("LOOPCTL_TEST_ADMIN_KEY", "sk-admin")
	var h hits
	h.status.Store(503)
	up := llmtest.NewOpenAI(h.script())
	defer up.Close()
	addr, _ := adminReplica(t, up.BaseURL(), "", "admin")
	trip := time.Now()
	if m := chat(t, addr); m != "up/b" {
		t.Fatalf("served by %s, want up/b after the trip", m)
	}
	t.Setenv(AdminKeyEnv, "sk-admin")
	out := admin(t, addr, "breakers")
	t.Logf("loopctl admin breakers:\n%s", out)
	if !strings.Contains(out, "recovery_timeout") || !strings.Contains(out, "fallback") {
		t.Errorf("breakers table:\n%s", out)
	}
	v := viewOf(t, addr)
	if v.State != fallback.Fallback || v.OpenReason != "recovery_timeout" || v.OpenUntil == nil ||
		v.LastFailure == nil || v.LastFailure.Status != 503 || v.LastFailure.Model != "up/a" {
		t.Fatalf("view: %+v", v)
	}
	if d := v.OpenUntil.Sub(trip.Add(30 * time.Second)); d < -time.Second || d > time.Second {
		t.Errorf("open_until %v is %v from trip + 30s", v.OpenUntil, d)
	}

	post := func(key, body string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/admin/breakers/m", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := post("", `{"action":"reset"}`); code != http.StatusUnauthorized {
		t.Errorf("reset without a key: %d, want 401", code)
	}
	var stderr bytes.Buffer
	t.Setenv(AdminKeyEnv, "")
	cmd := exec.Command(loopctlBinary(t), "admin", "--url", "http://"+addr, "reset", "m")
	cmd.Stderr = &stderr
	if err := cmd.Run(); cmd.ProcessState.ExitCode() != ExitFailure ||
		!strings.Contains(stderr.String(), "401") || !strings.Contains(stderr.String(), AdminKeyEnv) {
		t.Errorf("loopctl admin reset without a key: %v, %s", err, stderr.String())
	}
	t.Setenv(AdminKeyEnv, "sk-admin")
	if code, body := post("sk-admin", `{"action":"hold","ttl":"48h"}`); code != http.StatusBadRequest || !strings.Contains(body, `"param":"ttl"`) {
		t.Errorf("ttl 48h: %d %s", code, body)
	}
	if code, body := post("sk-admin", `{"action":"disable","entry":"up/z"}`); code != http.StatusBadRequest || !strings.Contains(body, `"param":"entry"`) {
		t.Errorf("entry not in the chain: %d %s", code, body)
	}
	out = admin(t, addr, "disable", "m", "--entry", "up/b", "--ttl", "1h", "--reason", "flaky")
	t.Logf("loopctl admin disable m --entry up/b --ttl 1h --reason flaky:\n%s", out)
	if !strings.Contains(out, "disabled until") || !strings.Contains(out, "flaky (by oncall)") {
		t.Errorf("disable answered:\n%s", out)
	}
	if m := chat(t, addr); m != "up/c" {
		t.Errorf("up/b disabled: served by %s", m)
	}
	admin(t, addr, "enable", "m", "--entry", "up/b")
	if m := chat(t, addr); m != "up/b" {
		t.Errorf("up/b enabled: served by %s", m)
	}
	h.status.Store(0)
	out = admin(t, addr, "reset", "m")
	if !strings.Contains(out, "primary") || chat(t, addr) != "up/a" {
		t.Errorf("after reset:\n%s", out)
	}
}
