package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/gateway"
)

// TestAdminMemberArgs: --member on disable, enable and reset sends a
// member action; a member hold, --member with --entry, and a disable
// without either are refused before anything is sent.
func TestAdminMemberArgs(t *testing.T) {
	env := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		body string // the POST body when accepted
		want string // in stderr when refused
	}{
		{args: []string{"disable", "claude", "--member", "up/a", "--ttl", "1h", "--reason", "INC-7"},
			body: `{"action":"disable","member":"up/a","reason":"INC-7","ttl":"1h"}`},
		{args: []string{"enable", "claude", "--member", "up/a"}, body: `{"action":"enable","member":"up/a"}`},
		{args: []string{"reset", "--member", "up/a", "claude"}, body: `{"action":"reset","member":"up/a"}`},
		{args: []string{"hold", "claude", "--member", "up/a", "--ttl", "10m"}, want: "there is no member hold"},
		{args: []string{"release", "claude", "--member", "up/a"}, want: "there is no member hold"},
		{args: []string{"disable", "claude", "--member", "up/a", "--entry", "up/x"}, want: "do not go together"},
		{args: []string{"enable", "claude"}, want: "--member UPSTREAM/MODEL"},
		{args: []string{"reload", "--member", "up/a"}, want: "reload takes no model"},
	} {
		var stderr bytes.Buffer
		a, code, done := parseAdmin(tc.args, io.Discard, &stderr, env)
		if tc.want != "" {
			if !done || code != ExitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("%q: exit %d (done %v), stderr %q; want a usage error with %q", tc.args, code, done, stderr.String(), tc.want)
			}
			continue
		}
		if done {
			t.Errorf("%q: refused: %s", tc.args, stderr.String())
		} else if got := string(a.body()); got != tc.body {
			t.Errorf("%q: body %s, want %s", tc.args, got, tc.body)
		}
	}
}

// TestAdminMemberOutput: a member action's answer (every model whose
// pools list the member) prints as the breaker table, the member in
// DISABLED; one model's detail has a line per pool member.
func TestAdminMemberOutput(t *testing.T) {
	now := time.Date(2026, 12, 7, 2, 0, 0, 0, time.UTC)
	end := now.Add(time.Hour)
	v := gateway.BreakerView{Model: "claude", Primary: "pool/p", Chain: []gateway.EntryView{},
		Pools: []gateway.PoolView{{Entry: "pool/p", Members: []gateway.MemberView{
			{Member: "up/a", Weight: 1, State: breaker.Closed, OpenUntil: &end, OpenReason: "manual", Disabled: true,
				DisabledUntil: &end, DisabledReason: "INC-7", DisabledBy: "oncall", Share: 0},
			{Member: "up/b", Weight: 2, State: breaker.Open, OpenUntil: &end, OpenReason: "recovery_timeout", Trips: 2,
				Latency: gateway.LatencyView{Stream: "1.2s"}, InFlight: 3, Share: 0.4},
		}}}}
	body, _ := json.Marshal(gateway.MemberActionView{Member: "up/a", Breakers: []gateway.BreakerView{v}})
	var out bytes.Buffer
	if err := writeAdmin(&out, body, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "claude") || !strings.Contains(out.String(), "up/a (member)") {
		t.Errorf("member action table:\n%s\nwant claude with up/a (member) disabled", out.String())
	}
	out.Reset()
	writeBreaker(&out, v, now)
	for _, want := range []string{
		"pool/p     up/a  closed, out until 2026-12-07T03:00:00Z, in 1h0m0s (manual)  trips 0  stream - / whole -  in flight 0  share 0%  disabled: INC-7 (by oncall)",
		"pool/p     up/b ×2  open, out until 2026-12-07T03:00:00Z, in 1h0m0s (recovery_timeout)  trips 2  stream 1.2s / whole -  in flight 3  share 40%",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("detail has no line\n%s\ngot:\n%s", want, out.String())
		}
	}
}
