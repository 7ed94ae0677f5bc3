package main

import (
	"strings"
	"testing"
)

func TestPartialBound(t *testing.T) {
	tests := []struct {
		k    kind
		in   int
		want int
	}{
		{brownoutKind, 3600, 432}, // 12 % of a 180 s brownout's requests
		{brownoutKind, 600, 72},
		{brownoutBudgetKind, 600, 719},
		{brownoutBudgetKind, 601, 721},
		{slowKind, 600, 200},
		{kind{name: "500"}, 600, -1},
	}
	for _, tt := range tests {
		got, ok := partialBound(row{kind: tt.k}, tt.in)
		if !ok {
			got = -1
		}
		if got != tt.want {
			t.Errorf("%s, %d client requests: bound %d, want %d", tt.k.name, tt.in, got, tt.want)
		}
	}
}

func TestRunConfig(t *testing.T) {
	p := pair{&upstream{addr: "127.0.0.1:1"}, &upstream{addr: "127.0.0.1:2"}}
	c := brownoutKind.runConfig()
	cfg := loopctlConfig("127.0.0.1:3", p, c.withBackoff(2))
	for _, want := range []string{"    breaker:\n      trip_threshold: 3\n      recovery_timeout: 5s\n      failure_rate: 0.25\n      rate_window: 10s\n      rate_min_calls: 20\n" +
		"      slow_call_after: 1s\n      slow_call_rate: 0.5\n      recovery_backoff: 2\n",
		"retry:\n  max_retries: 1\ntimeouts:"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	if cfg := loopctlConfig("127.0.0.1:3", p, brownoutBudgetKind.runConfig()); !strings.Contains(cfg, "retry:\n  max_retries: 1\n  budget: 0.2\n") {
		t.Errorf("budget config:\n%s", cfg)
	}
	if cfg := loopctlConfig("127.0.0.1:3", p, c.withBackoff(0)); strings.Contains(cfg, "recovery_backoff") {
		t.Errorf("-recovery-backoff 0 wrote the key:\n%s", cfg)
	}
	if got := strings.Join(c.rev4Keys(), ","); got != "breaker.failure_rate,breaker.rate_window,breaker.rate_min_calls,breaker.slow_call_after,breaker.slow_call_rate" {
		t.Errorf("rev4Keys = %s", got)
	}
	problems := "models[0].breaker.failure_rate: unknown key\nmodels[0].breaker.rate_window: unknown key"
	if got := rejected(problems, c.rev4Keys()); got != "models[0].breaker.failure_rate: unknown key" {
		t.Errorf("rejected = %q", got)
	}
	if got := rejected("retry.budget: unknown key", slowKind.config.rev4Keys()); got != "" {
		t.Errorf("slow's keys matched %q", got)
	}
	if got := rejected("retry.budget: unknown key", brownoutBudgetKind.config.rev4Keys()); got == "" {
		t.Error("retry.budget not matched")
	}
}

func TestDescribe(t *testing.T) {
	if got := brownoutKind.config.withBackoff(2).describe(); got != "breaker.failure_rate 0.25, breaker.rate_window 10s, breaker.rate_min_calls 20, breaker.slow_call_after 1s, breaker.slow_call_rate 0.5, breaker.recovery_backoff 2" {
		t.Errorf("describe = %q", got)
	}
	if got := brownoutBudgetKind.config.describe(); got != "retry.budget 0.2" {
		t.Errorf("describe = %q", got)
	}
}
