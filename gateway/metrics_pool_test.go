package gateway

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

// TestPoolMetricsScrape: /metrics has the pools' series with their names
// and labels (§11.5): the member attempt counter, the member gauges read
// at scrape time (state one-hot, latency estimates, in flight, headroom
// absent while unknown), the member breakers in loopctl_breaker_state
// with kind member, and no label value that is not from the config.
func TestPoolMetricsScrape(t *testing.T) {
	clk := &manualClock{t: time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)}
	f := newPoolFixture(t, poolAdminConfig(), Options{Now: clk.now})
	g := f.gw
	pd := g.poolNamed("p")
	now := clk.now()
	served, err := pd.p.Pin(now, &pool.Request{}, 0, pool.Need{}) // up/a
	if err != nil {
		t.Fatal(err)
	}
	served.Headroom(now.Add(200*time.Millisecond), pool.Headroom{Requests: pool.Limit{Remaining: 10, Reset: now.Add(time.Minute)}})
	served.Success(now.Add(200 * time.Millisecond))
	waiting, err := pd.p.Pin(now, &pool.Request{}, 1, pool.Need{}) // up/b, still in flight
	if err != nil {
		t.Fatal(err)
	}
	defer waiting.Cancel(now)
	trip(t, g, "up/c")
	g.m.poolAttempt("p", "up/a", poolOutSuccess)
	g.m.poolAttempt("p", "up/a", poolOutSuccess)
	g.m.poolAttempt("q", "up/d", poolOutRateLimit)
	clk.add(time.Second)

	a := f.admin("/metrics", "", "sk-admin")
	if a.status != 200 {
		t.Fatalf("/metrics: %d %s", a.status, a.body)
	}
	for _, want := range []string{
		`loopctl_pool_requests_total{member="up/a",outcome="success",pool="p"} 2`,
		`loopctl_pool_requests_total{member="up/d",outcome="rate_limit",pool="q"} 1`,
		`loopctl_pool_member_state{member="up/a",state="closed"} 1`,
		`loopctl_pool_member_state{member="up/a",state="open"} 0`,
		`loopctl_pool_member_state{member="up/c",state="open"} 1`,
		`loopctl_pool_member_state{member="up/d",state="half-open"} 0`,
		`loopctl_pool_member_in_flight{member="up/b"} 1`,
		`loopctl_pool_member_in_flight{member="up/a"} 0`,
		`loopctl_pool_member_headroom{kind="requests",member="up/a"} 10`,
		`loopctl_breaker_state{breaker="member@up/c",kind="member",state="open"} 1`,
		`loopctl_breaker_state{breaker="member@up/d",kind="member",state="closed"} 1`,
	} {
		if !strings.Contains(a.body, want+"\n") {
			t.Errorf("/metrics has no %s", want)
		}
	}
	if v := sample(t, a.body, `loopctl_pool_member_latency_estimate_seconds{kind="whole",member="up/a"}`); v <= 0 || v > 0.2 {
		t.Errorf("up/a's whole latency estimate = %v s, want in (0, 0.2] after one 200ms sample", v)
	}
	for _, absent := range []string{
		`loopctl_pool_member_latency_estimate_seconds{kind="stream",member="up/a"}`, // no streamed sample
		`loopctl_pool_member_headroom{kind="tokens",member="up/a"}`,                 // not carried
		`loopctl_pool_member_headroom{kind="requests",member="up/b"}`,               // no answer yet
	} {
		if strings.Contains(a.body, absent) {
			t.Errorf("/metrics has %s: it is unknown, so absent", absent)
		}
	}
	if n := strings.Count(a.body, `loopctl_pool_member_state{member="up/b",`); n != 3 {
		t.Errorf("up/b (in pools p and q) has %d state series, want 3: one deployment, one set", n)
	}
	configured := map[string]bool{"p": true, "q": true, "up/a": true, "up/b": true, "up/c": true, "up/d": true,
		"success": true, "failure": true, "rate_limit": true, "cancel": true, "no_verdict": true,
		"closed": true, "open": true, "half-open": true, "stream": true, "whole": true,
		"requests": true, "tokens": true, "input_tokens": true, "output_tokens": true}
	label := regexp.MustCompile(`="([^"]*)"`)
	for _, line := range strings.Split(a.body, "\n") {
		if !strings.HasPrefix(line, "loopctl_pool_") {
			continue
		}
		for _, m := range label.FindAllStringSubmatch(line, -1) {
			if !configured[m[1]] {
				t.Errorf("label value %q is not from the config: %s", m[1], line)
			}
		}
	}
}

// sample returns the value of the series named (with its labels) in a
// Prometheus text exposition, failing without one.
func sample(t *testing.T, body, series string) float64 {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	t.Fatalf("no series %s", series)
	return 0
}
