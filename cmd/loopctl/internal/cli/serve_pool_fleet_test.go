package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/llmtest"
)

// TestServePoolFleet (GATEWAY §11.5, FLEET rev 4): two `loopctl serve`
// replicas, separate OS processes with --redis on one real redis-server,
// in front of a pool of three deployments (each its own upstream). Member
// a trips through replica 1 (its upstream failing); replica 2 then sends
// it none of its own requests. Member b, disabled through replica 1's
// admin API with a TTL, gets none of replica 2's requests until the TTL
// ends, and some after.
func TestServePoolFleet(t *testing.T) {
	url := startRedis(t)
	ua := llmtest.NewOpenAI(llmtest.Always(llmtest.Error(500)))
	defer ua.Close()
	ub := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("from b")))
	defer ub.Close()
	uc := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("from c")))
	defer uc.Close()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "admin"), []byte("sk-admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`listen: 127.0.0.1:0
admin_keys: [{name: oncall, key_file: %s}]
upstreams:
  - {name: a, base_url: %s}
  - {name: b, base_url: %s}
  - {name: c, base_url: %s}
pools:
  - name: p
    members: [a/m, b/m, c/m]
    breaker: {trip_threshold: 1, recovery_timeout: 1m}
models:
  - {name: m, primary: pool/p}
retry:
  max_retries: 0
store:
  prefix: poolfleet%d
`, filepath.Join(dir, "admin"), ua.BaseURL(), ub.BaseURL(), uc.BaseURL(), time.Now().UnixNano()))
	args := []string{"serve", "--config", cfg, "--redis", url, "--grace", "1s"}
	r1, _ := startReplica(t, args[1:]...)
	r2, _ := startReplica(t, args[1:]...)
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	session := 0 // each request its own session, so that every member is some session's home
	chat := func(addr string) (int, string) {
		session++
		req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/chat/completions",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-loopctl-session", fmt.Sprint("s", session))
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode, res.Header.Get("x-loopctl-model")
	}
	for i := 0; len(ua.Requests()) == 0; i++ {
		if i == 100 {
			t.Fatal("replica 1 sent member a nothing in 100 requests")
		}
		if code, _ := chat(r1); code != http.StatusOK {
			t.Fatalf("replica 1: %d", code)
		}
	}
	// The trip reaches replica 2 in one pub/sub message: a bounded wait.
	waitAdmin(t, r2, "a/m", "open", func(v gateway.MemberView) bool { return v.State == breaker.Open })
	before := len(ua.Requests())
	for range 20 {
		if code, model := chat(r2); code != http.StatusOK || model == "a/m" {
			t.Fatalf("replica 2: %d from %s", code, model)
		}
	}
	if n := len(ua.Requests()) - before; n != 0 {
		t.Fatalf("replica 2 sent %d requests to member a, tripped through replica 1; want 0", n)
	}
	// Shared: the breaker and its trip count. Per process: the figures.
	v1, v2 := memberView(t, r1, "a/m"), memberView(t, r2, "a/m")
	if v1.Trips != 1 || v2.Trips != 1 {
		t.Errorf("a/m's trips: replica 1 %d, replica 2 %d; want 1 for both", v1.Trips, v2.Trips)
	}
	if v1.Latency.Whole == "" || v1.LastMinute == 0 || v2.Latency.Whole != "" || v2.LastMinute != 0 {
		t.Errorf("a/m's figures: replica 1 %+v, %d in the last minute; replica 2 %+v, %d; want replica 1's only",
			v1.Latency, v1.LastMinute, v2.Latency, v2.LastMinute)
	}

	const ttl = 1500 * time.Millisecond
	sent := time.Now()
	req, _ := http.NewRequest(http.MethodPost, "http://"+r1+"/admin/breakers/m",
		strings.NewReader(`{"action":"disable","member":"b/m","ttl":"1500ms","reason":"INC-3"}`))
	req.Header.Set("Authorization", "Bearer sk-admin")
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("disable b/m through replica 1: %d", res.StatusCode)
	}
	waitAdmin(t, r2, "b/m", "disabled", func(v gateway.MemberView) bool { return v.Disabled && v.DisabledReason == "INC-3" })
	beforeB := len(ub.Requests())
	for time.Since(sent) < ttl-300*time.Millisecond {
		if code, model := chat(r2); code != http.StatusOK || model != "c/m" {
			t.Fatalf("replica 2 with b/m disabled: %d from %s", code, model)
		}
	}
	if n := len(ub.Requests()) - beforeB; n != 0 {
		t.Fatalf("replica 2 sent %d requests to member b within its disable's TTL", n)
	}
	for deadline := sent.Add(ttl + 3*time.Second); len(ub.Requests()) == beforeB; {
		if time.Now().After(deadline) {
			t.Fatal("replica 2 sent member b nothing within 3s after its disable's TTL")
		}
		chat(r2)
	}
}

// waitAdmin polls replica addr's admin view of model m until member ref's
// view satisfies ok, for at most 2s (a pub/sub message between processes).
func waitAdmin(t *testing.T, addr, ref, what string, ok func(gateway.MemberView) bool) {
	t.Helper()
	var last gateway.MemberView
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if last = memberView(t, addr, ref); ok(last) {
			return
		}
	}
	t.Fatalf("replica %s: member %s not %s within 2s: %+v", addr, ref, what, last)
}

// memberView returns member ref's view in replica addr's admin view of
// model m.
func memberView(t *testing.T, addr, ref string) gateway.MemberView {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/admin/breakers/m", nil)
	req.Header.Set("Authorization", "Bearer sk-admin")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v gateway.BreakerView
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		t.Fatalf("replica %s: the admin view: %v", addr, err)
	}
	for _, pv := range v.Pools {
		for _, mv := range pv.Members {
			if mv.Member == ref {
				return mv
			}
		}
	}
	t.Fatalf("replica %s: no member %s in %+v", addr, ref, v.Pools)
	return gateway.MemberView{}
}
