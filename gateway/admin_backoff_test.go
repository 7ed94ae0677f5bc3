package gateway

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/llmtest"
)

// TestAdminShowsBackoff: GET /admin/breakers/{model} shows the trip count
// and the cooldown in force (SEMANTICS §9.1, GATEWAY §9.1): a primary
// that fails its probe re-trips with n = 2 and a cooldown twice the base,
// reason backoff; the thresholds show the factor and the cap in force.
func TestAdminShowsBackoff(t *testing.T) {
	clk := &manualClock{t: time.Date(2026, 12, 6, 4, 0, 0, 0, time.UTC)}
	script := llmtest.ByModel(map[string]llmtest.Script{"a": llmtest.Always(llmtest.Error(503)), "b": llmtest.Always(llmtest.Text("b"))})
	cfg := chain()
	cfg.Models[0].Breaker = Breaker{TripThreshold: 1, RecoveryTimeout: 30 * time.Second, RecoveryBackoff: 2}
	cfg.Retry.MaxRetries = -1
	f := newFixture(t, script, cfg, Options{Now: clk.now})
	if a := f.post(chatBody("smart", false)); a.status != 200 {
		t.Fatalf("request: %d", a.status)
	}
	v := f.admin("/admin/breakers/smart", "", "").view(t)
	if v.Counters.Trips != 1 || v.Cooldown != "30s" || v.OpenReason != "recovery_timeout" {
		t.Fatalf("after the first trip: trips %d, cooldown %q, reason %q", v.Counters.Trips, v.Cooldown, v.OpenReason)
	}
	clk.add(30 * time.Second)
	if a := f.post(chatBody("smart", false)); a.status != 200 || a.header.Get("X-Loopctl-Model") != "up/b" {
		t.Fatalf("the probe's request: %d %v", a.status, a.header)
	}
	v = f.admin("/admin/breakers/smart", "", "").view(t)
	if v.State != fallback.Fallback || v.Counters.Trips != 2 || v.Cooldown != "1m0s" || v.OpenReason != "backoff" ||
		v.OpenUntil == nil || !v.OpenUntil.Equal(clk.now().Add(time.Minute)) {
		t.Fatalf("after the failed probe: %+v", v)
	}
	if v.Thresholds.RecoveryBackoff != 2 || v.Thresholds.MaxRecoveryTimeout != "5m0s" {
		t.Errorf("thresholds %+v", v.Thresholds)
	}
}

// TestAdminThresholdsBackoff: the thresholds show the backoff in force (the
// factor only while on, the cap with its default) and slow_call_after
// alone (SEMANTICS §9.2: it fails slow probes without a rate).
func TestAdminThresholdsBackoff(t *testing.T) {
	for _, tc := range []struct {
		s              fallback.Settings
		backoff        float64
		max, slowAfter string
		slowRate       float64
	}{
		{fallback.Settings{RecoveryTimeout: 5 * time.Second, RecoveryBackoff: 2}, 2, "50s", "", 0},
		{fallback.Settings{RecoveryBackoff: 1, MaxRecoveryTimeout: time.Hour}, 0, "1h0m0s", "", 0},
		{fallback.Settings{SlowCallAfter: time.Second}, 0, "10m0s", "1s", 0},
	} {
		tc.s.Primary = "up/a"
		th := thresholds(tc.s)
		if th.RecoveryBackoff != tc.backoff || th.MaxRecoveryTimeout != tc.max || th.SlowCallAfter != tc.slowAfter || th.SlowCallRate != tc.slowRate {
			t.Errorf("%+v: thresholds %+v", tc.s, th)
		}
	}
}
