package main

import (
	"strings"
	"testing"
	"time"
)

// TestBrownoutPattern: the brownout fails exactly 3 requests in every 10 and
// never two in a row, across the tens too.
func TestBrownoutPattern(t *testing.T) {
	fails := 0
	for n := range 1000 {
		if brownoutFails(n) {
			fails++
			if brownoutFails(n + 1) {
				t.Fatalf("requests %d and %d both fail", n, n+1)
			}
		}
		if (n+1)%10 == 0 && fails != 3*(n+1)/10 {
			t.Fatalf("%d failures in the first %d requests, want %d", fails, n+1, 3*(n+1)/10)
		}
	}
}

func TestPartialBound(t *testing.T) {
	o := options{outage: 30 * time.Second}
	primary := make([]arrival, 0, 25)
	for i := range 25 { // slow requests ending at 2 s, 2.05 s, ...
		at := time.Duration(i) * 50 * time.Millisecond
		primary = append(primary, arrival{at: at, end: at + 2*time.Second, broken: true})
	}
	var recs []record
	for i := range 60 { // client requests every 50 ms, each 2 s long
		recs = append(recs, record{at: time.Duration(i) * 50 * time.Millisecond, lat: 2 * time.Second, sent: true})
	}
	trip := primary[rateMinCalls-1].end // 2.95 s: requests due in (0.95 s, 2.95 s] are in flight
	tests := []struct {
		k    kind
		in   int
		want int
	}{
		{brownoutKind, 600, 200},
		{brownoutKind, 601, 200},
		{brownoutBudgetKind, 600, 719},
		{brownoutBudgetKind, 601, 721},
		{slowKind, 600, rateMinCalls + 40 + tripThreshold*6},
		{kind{name: "500"}, 600, -1},
	}
	for _, tt := range tests {
		r := row{kind: tt.k, primary: primary, recs: recs}
		got, ok := partialBound(r, o, tt.in)
		if !ok {
			got = -1
		}
		if got != tt.want {
			t.Errorf("%s, %d client requests: bound %d, want %d (trip at %v)", tt.k.name, tt.in, got, tt.want, trip)
		}
	}
}

func TestRunConfig(t *testing.T) {
	p := pair{&upstream{addr: "127.0.0.1:1"}, &upstream{addr: "127.0.0.1:2"}}
	c := brownoutKind.runConfig()
	cfg := loopctlConfig("127.0.0.1:3", p, c)
	for _, want := range []string{"    breaker:\n      trip_threshold: 3\n      recovery_timeout: 5s\n      failure_rate: 0.25\n      rate_window: 10s\n      rate_min_calls: 20\n",
		"retry:\n  max_retries: 1\ntimeouts:"} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config lacks %q:\n%s", want, cfg)
		}
	}
	if cfg := loopctlConfig("127.0.0.1:3", p, brownoutBudgetKind.runConfig()); !strings.Contains(cfg, "retry:\n  max_retries: 1\n  budget: 0.2\n") {
		t.Errorf("budget config:\n%s", cfg)
	}
	if got := strings.Join(c.rev4Keys(), ","); got != "breaker.failure_rate,breaker.rate_window,breaker.rate_min_calls" {
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
	if got := brownoutKind.config.describe(); got != "breaker.failure_rate 0.25, breaker.rate_window 10s, breaker.rate_min_calls 20" {
		t.Errorf("describe = %q", got)
	}
	if got := brownoutBudgetKind.config.describe(); got != "retry.budget 0.2" {
		t.Errorf("describe = %q", got)
	}
}
