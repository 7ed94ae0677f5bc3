package cli

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// adminHoldTTL is the hold of TestAdminHoldFleet: long enough for a restart
// of both replicas, short enough to watch it end.
const adminHoldTTL = 6 * time.Second

// TestAdminHoldFleet: two `loopctl serve` replicas share one real
// redis-server. A hold set through replica 1 reaches replica 2 within 1 s,
// after which no request of replica 2 reaches the held primary; a chain
// entry disabled on replica 1 is skipped by replica 2; the hold survives a
// restart of both replicas and ends by itself at its TTL.
func TestAdminHoldFleet(t *testing.T) {
	t.Setenv("LOOPCTL_TEST_ADMIN_KEY", "sk-admin")
	t.Setenv(AdminKeyEnv, "sk-admin")
	redisURL := startRedis(t)
	var h hits
	up := llmtest.NewOpenAI(h.script())
	defer up.Close()
	prefix := fmt.Sprintf("admin%d", time.Now().UnixNano())
	r1, stop1 := adminReplica(t, up.BaseURL(), redisURL, prefix)
	r2, stop2 := adminReplica(t, up.BaseURL(), redisURL, prefix)
	if chat(t, r1) != "up/a" || chat(t, r2) != "up/a" {
		t.Fatal("the primary does not serve before the hold")
	}

	out := admin(t, r1, "hold", "m", "--ttl", adminHoldTTL.String(), "--reason", "INC-42")
	held := time.Now()
	if !strings.Contains(out, "INC-42 (by oncall)") || !strings.Contains(out, "manual") {
		t.Fatalf("hold answered:\n%s", out)
	}
	before := h.a.Load()
	for chat(t, r2) != "up/b" {
		if time.Since(held) > time.Second {
			t.Fatalf("replica 2 still routes to the primary %v after the hold", time.Since(held))
		}
		before = h.a.Load()
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("replica 2 routed around the hold %v after it was set", time.Since(held).Round(time.Millisecond))
	for range 10 {
		if m := chat(t, r2); m != "up/b" {
			t.Fatalf("held: replica 2 served from %s", m)
		}
	}
	if v := viewOf(t, r2); v.Hold == nil || v.Hold.Reason != "INC-42" || v.Hold.By != "oncall" || !v.Shared || v.OpenReason != "manual" {
		t.Fatalf("replica 2's view of the hold: %+v (hold %+v)", v, v.Hold)
	}

	admin(t, r1, "disable", "m", "--entry", "up/b", "--reason", "flaky")
	for deadline := time.Now().Add(time.Second); chat(t, r2) != "up/c"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("replica 2 did not skip the disabled up/b within 1s")
		}
	}
	admin(t, r2, "enable", "m", "--entry", "up/b")

	// Restart both replicas: the hold lives in the store.
	stop1()
	stop2()
	r1, _ = adminReplica(t, up.BaseURL(), redisURL, prefix)
	r2, _ = adminReplica(t, up.BaseURL(), redisURL, prefix)
	if time.Since(held) >= adminHoldTTL-500*time.Millisecond {
		t.Fatalf("the restart took until %v of the %v hold: nothing left to check", time.Since(held), adminHoldTTL)
	}
	for _, r := range []string{r1, r2} {
		if v := viewOf(t, r); v.Hold == nil || v.Hold.Reason != "INC-42" {
			t.Fatalf("after the restart, %s shows no hold: %+v", r, v)
		}
		if m := chat(t, r); m != "up/b" {
			t.Fatalf("after the restart, %s served from %s", r, m)
		}
	}
	if n := h.a.Load(); n != before {
		t.Fatalf("%d requests reached the held primary", n-before)
	}

	// The hold ends by itself at its TTL, not before: then the next request
	// probes the primary.
	time.Sleep(time.Until(held.Add(adminHoldTTL - 300*time.Millisecond)))
	if m := chat(t, r2); m != "up/b" {
		t.Fatalf("300ms before the hold's TTL, replica 2 served from %s", m)
	}
	time.Sleep(time.Until(held.Add(adminHoldTTL)))
	for deadline := held.Add(adminHoldTTL + time.Second); chat(t, r2) != "up/a"; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the primary does not serve 1s after the hold's TTL: %+v", viewOf(t, r2))
		}
	}
	if v := viewOf(t, r1); v.Hold != nil {
		t.Errorf("replica 1 still shows the hold after its TTL: %+v", v.Hold)
	}
}
