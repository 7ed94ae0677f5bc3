package gateway

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// fleetPools is threePool("session") with members that trip on one failure
// and recover after a minute, and admin key sk-admin: a/m, b/m and c/m
// behind pool p, model claude (then d/backup).
func fleetPools() Config {
	cfg := threePool("session")
	cfg.Pools[0].Breaker = Breaker{TripThreshold: 1, RecoveryTimeout: time.Minute}
	cfg.AdminKeys = []ClientKey{{Name: "oncall", Key: "sk-admin"}}
	return cfg
}

// fleetReplica is one gateway of a fleet on the redis-server srv (its own
// fleet.Store connection, prefix "pf"), with its own upstreams: a down
// (500), b and c serving, d the chain's backup.
func fleetReplica(t *testing.T, srv *redistest.Server) *poolGW {
	t.Helper()
	st, err := fleet.Dial("redis://"+srv.Addr(), fleet.Options{Prefix: "pf", StoreTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	select {
	case <-st.Ready():
	case <-time.After(5 * time.Second):
		t.Fatal("the store did not subscribe within 5s")
	}
	opt := Options{MemberBackend: st.ToolBackend(), MemberDisables: st.MemberDisables()}
	return newPoolGW(t, fleetPools(), opt, down("a", 500), serving("b"), serving("c"), serving("d"))
}

// waitFor polls cond every millisecond for at most 2s (a pub/sub message
// between two processes on loopback).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(2 * time.Second)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("after 2s: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// sessionChat posts a chat completion for claude in session i, so that
// every member is some requests' home.
func (p *poolGW) sessionChat(i int) answer {
	return p.chat("claude", false, "x-loopctl-session", "s"+strconv.Itoa(i))
}

// memberStatus is what pool p of g knows of its member ref.
func memberStatus(g *Gateway, ref string) (st struct {
	Trips      int
	Whole      time.Duration
	LastMinute int
}) {
	pd := g.poolNamed("p")
	for i, m := range pd.members {
		if m.ref == ref {
			s := pd.p.Status(g.now(), i)
			st.Trips, st.Whole, st.LastMinute = s.Breaker.Trips, s.Whole, s.LastMinute
		}
	}
	return st
}

// TestPoolMemberTrippedThroughOneGatewayIsRefusedByAnother (GATEWAY §11.5,
// FLEET rev 4): two gateways, each on its own connection to one
// redis-server and with its own upstreams. Member a/m trips through
// gateway 1 (its upstream failing); gateway 2 then refuses it with no
// request of its own (a's upstream of gateway 2 receives none), reading the
// trip count from the store; the latency estimates and the last minute's
// counts stay each gateway's own.
func TestPoolMemberTrippedThroughOneGatewayIsRefusedByAnother(t *testing.T) {
	srv := redistest.Start(t)
	g1, g2 := fleetReplica(t, srv), fleetReplica(t, srv)
	for i := 0; g1.gw.memberBreaker("a/m").State() != breaker.Open; i++ {
		if i == 200 {
			t.Fatalf("a/m did not trip through gateway 1 in 200 requests (a got %d)", g1.count("a"))
		}
		if a := g1.sessionChat(i); a.status != http.StatusOK {
			t.Fatalf("gateway 1: %d %s", a.status, a.body)
		}
	}
	waitFor(t, "gateway 2 sees a/m open", func() bool { return g2.gw.memberBreaker("a/m").State() == breaker.Open })
	for i := range 30 {
		if a := g2.sessionChat(i); a.status != http.StatusOK || a.header.Get("x-loopctl-model") == "a/m" {
			t.Fatalf("gateway 2: %d from %s: %s", a.status, a.header.Get("x-loopctl-model"), a.body)
		}
	}
	if n := g2.count("a"); n != 0 {
		t.Fatalf("gateway 2 sent %d requests to a/m, tripped through gateway 1; want 0", n)
	}
	if g2.count("b")+g2.count("c") != 30 {
		t.Fatalf("gateway 2's members served %d+%d of 30", g2.count("b"), g2.count("c"))
	}
	s1, s2 := memberStatus(g1.gw, "a/m"), memberStatus(g2.gw, "a/m")
	if s1.Trips != 1 || s2.Trips != 1 {
		t.Errorf("trip count: gateway 1 %d, gateway 2 %d; want 1 for both (n is shared)", s1.Trips, s2.Trips)
	}
	if s1.Whole == 0 || s1.LastMinute == 0 {
		t.Errorf("gateway 1 has no figures of a/m, which it sent %d requests: %+v", g1.count("a"), s1)
	}
	if s2.Whole != 0 || s2.LastMinute != 0 {
		t.Errorf("gateway 2 has figures of a/m, which it never sent a request: %+v (estimates are per process)", s2)
	}
	if b1, b2 := memberStatus(g1.gw, "b/m").LastMinute, memberStatus(g2.gw, "b/m").LastMinute; b1 != g1.count("b") || b2 != g2.count("b") {
		t.Errorf("b/m's last minute: gateway 1 %d (sent %d), gateway 2 %d (sent %d); want each its own", b1, g1.count("b"), b2, g2.count("b"))
	}
	// A member reset through gateway 1's admin API resets the shared
	// breaker, n included: gateway 2 reads it closed with no trip.
	if a := g1.do(context.Background(), "/admin/breakers/claude", `{"action":"reset","member":"a/m"}`,
		"Authorization", "Bearer sk-admin"); a.status != http.StatusOK {
		t.Fatalf("reset through gateway 1: %d %s", a.status, a.body)
	}
	waitFor(t, "gateway 2 reads a/m reset", func() bool {
		mb := g2.gw.memberBreaker("a/m")
		return mb.State() == breaker.Closed && mb.Snapshot().Trips == 0
	})
}

// TestPoolMemberDisabledThroughOneGatewayIsNotChosenByAnother (GATEWAY
// §11.5): b/m disabled through gateway 1's admin API with a TTL is not
// chosen by gateway 2 (its b upstream receives nothing) until the TTL ends
// on the store's clock; then gateway 2 chooses it again, with no enable.
func TestPoolMemberDisabledThroughOneGatewayIsNotChosenByAnother(t *testing.T) {
	srv := redistest.Start(t)
	g1, g2 := fleetReplica(t, srv), fleetReplica(t, srv)
	const ttl = 800 * time.Millisecond
	sent := time.Now()
	a := g1.do(context.Background(), "/admin/breakers/claude", `{"action":"disable","member":"b/m","ttl":"800ms","reason":"INC-9"}`,
		"Authorization", "Bearer sk-admin")
	if a.status != http.StatusOK {
		t.Fatalf("disable through gateway 1: %d %s", a.status, a.body)
	}
	waitFor(t, "gateway 2 sees b/m disabled", func() bool { return g2.gw.disabledMember("b/m") })
	if d, ok := g2.gw.pools.off.lookup("b/m", time.Now()); !ok || d.reason != "INC-9" || d.by != "oncall" {
		t.Fatalf("gateway 2 reads the disable as %+v %v, want INC-9 by oncall", d, ok)
	}
	for i := 0; g2.gw.disabledMember("b/m"); i++ {
		if a := g2.sessionChat(i); a.status != http.StatusOK {
			t.Fatalf("gateway 2 with b/m disabled: %d %s", a.status, a.body)
		}
		if n := g2.count("b"); n != 0 {
			if g2.gw.disabledMember("b/m") {
				t.Fatalf("gateway 2 chose b/m, disabled through gateway 1, %.0f ms after the disable", time.Since(sent).Seconds()*1000)
			}
			break // the TTL ended between the loop's check and this request's choice
		}
		if time.Since(sent) > ttl+2*time.Second {
			t.Fatal("b/m still disabled 2s after its TTL")
		}
	}
	if early := time.Since(sent); early < ttl-100*time.Millisecond {
		t.Fatalf("b/m's disable ended on gateway 2 after %v, before its TTL of %v", early, ttl)
	}
	for i := 0; g2.count("b") == 0; i++ {
		if i == 100 {
			t.Fatal("gateway 2 did not choose b/m in 100 requests after its disable ended")
		}
		g2.sessionChat(i)
	}
	if g1.gw.disabledMember("b/m") {
		t.Error("gateway 1 still has b/m disabled after its TTL")
	}
}

// TestReloadKeepsTheSharedMemberBreaker (GATEWAY §11.5 "Reload", FLEET
// rev 3 "Reload"): a reload that keeps a/m with new breaker settings keeps
// its shared member breaker (still open, its trip count kept, the same
// breaker reconfigured) on the same keys, so a gateway started on the new
// configuration reads it open; a reload that drops and re-adds a member
// hands the re-added one its new settings.
func TestReloadKeepsTheSharedMemberBreaker(t *testing.T) {
	srv := redistest.Start(t)
	g1 := fleetReplica(t, srv)
	for i := 0; g1.gw.memberBreaker("a/m").State() != breaker.Open; i++ {
		if i == 200 {
			t.Fatal("a/m did not trip in 200 requests")
		}
		g1.sessionChat(i)
	}
	cfg := g1.gw.cfg
	cfg.Pools = append([]Pool(nil), cfg.Pools...)
	cfg.Pools[0].Breaker.RecoveryTimeout = 2 * time.Minute
	next, _, err := g1.gw.Reload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(next.Close)
	mb := next.memberBreaker("a/m")
	if mb != g1.gw.memberBreaker("a/m") || mb.State() != breaker.Open || mb.Snapshot().Trips != 1 {
		t.Fatalf("after the reload a/m is %+v (same breaker %v), want the same breaker open with 1 trip",
			mb.Snapshot(), mb == g1.gw.memberBreaker("a/m"))
	}
	if g3 := fleetReplica(t, srv); g3.gw.memberBreaker("a/m").State() != breaker.Open {
		t.Fatalf("a gateway started later reads a/m %v, want open (the same key)", g3.gw.memberBreaker("a/m").State())
	}

	dropped := cfg
	dropped.Pools = []Pool{{Name: "p", Members: []PoolMember{{Target: "a/m"}, {Target: "c/m"}}, Breaker: cfg.Pools[0].Breaker}}
	mid, _, err := next.Reload(dropped)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(mid.Close)
	if mid.memberBreaker("b/m") != nil {
		t.Fatal("b/m kept a member breaker after a reload that dropped it")
	}
	readded := cfg
	readded.Pools = append([]Pool(nil), cfg.Pools...)
	readded.Pools[0].Breaker.TripThreshold = 5
	last, _, err := mid.Reload(readded)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(last.Close)
	b := last.memberBreaker("b/m")
	for range 4 {
		p, err := b.Allow()
		if err != nil {
			t.Fatal(err)
		}
		p.Failure()
	}
	if b.State() != breaker.Closed {
		t.Fatalf("re-added b/m with trip_threshold 5 is %v after 4 failures (the old threshold, 1, applied)", b.State())
	}
}
