package mcptool

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitUp waits (in the bubble's time) until u is up.
func waitUp(t *testing.T, u *Upstream) {
	t.Helper()
	for range 1000 {
		if u.Status().Up {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("upstream %s never came back: %+v", u.Name(), u.Status())
}

func TestProxyCrashedUpstreamRestartsWhileCallersGetRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		h := start(t, ProxyConfig{Breaker: breaker.Settings{FailureThreshold: 2, RecoveryDuration: 5 * time.Second}},
			map[string]*scripted{"s": s})
		before := h.names()
		u := h.p.Upstreams()[0]

		// The server dies mid-call and stays down (its restarts fail).
		s.refuse.Store(true)
		res, ci := h.call("crash", nil)
		if !res.IsError || ci.Outcome != OutcomeFailure {
			t.Fatalf("call during which the server died: %q %+v", text(res), ci)
		}
		synctest.Wait()
		if u.Status().Up {
			t.Fatal("upstream still up after its connection broke")
		}
		if got := h.names(); !slices.Equal(got, before) {
			t.Fatalf("tools while down = %v, want the last known list %v", got, before)
		}
		// Calls while it is down are not sent: no verdict on a healthy tool,
		// however many come (threshold 2).
		for range 4 {
			res, ci := h.call("echo", map[string]any{"text": "x"})
			if ci.Outcome != OutcomeServerDown || !errors.Is(ci.Err, ErrDown) ||
				!strings.HasPrefix(text(res), "tool 'echo' (server 's') is unavailable: its server is down and restarting; retry in ") {
				t.Fatalf("call while down: %q %+v", text(res), ci)
			}
			if m := meta(t, res); m.Outcome != OutcomeServerDown || m.RetryMs <= 0 {
				t.Fatalf("meta of a call while down: %+v", m)
			}
		}
		if st := h.p.Registry().Stats("s/echo"); st.Failures != 0 || h.p.Registry().Breaker("s/echo").State() != breaker.Closed {
			t.Fatalf("echo after calls refused because its server was down: %+v, %v", st, h.p.Registry().Breaker("s/echo").State())
		}

		// The server can start again: the upstream reconnects by itself, and
		// echo answers at once (it was never tripped).
		time.Sleep(3 * time.Second) // a few failed restarts
		s.refuse.Store(false)
		waitUp(t, u)
		if n := u.Status().Restarts; n < 3 {
			t.Fatalf("restarts = %d after several failed attempts and one success, want every attempt counted", n)
		}
		res, ci = h.call("echo", map[string]any{"text": "back"})
		if res.IsError || text(res) != "back" || ci.Probe {
			t.Fatalf("after the restart: %q %+v", text(res), ci)
		}
	})
}

func TestProxyDeadUpstreamNeverFailsTheOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dead, live := newScripted(), newScripted()
		dead.refuse.Store(true)
		h := start(t, ProxyConfig{}, map[string]*scripted{"dead": dead, "live": live}) // initialize succeeded
		names := h.names()
		if len(names) != 8 || !slices.Contains(names, "live__echo") {
			t.Fatalf("tools/list with one dead upstream = %v, want live's 8 tools, prefixed", names)
		}
		if res, _ := h.call("live__echo", map[string]any{"text": "ok"}); text(res) != "ok" {
			t.Fatalf("live__echo: %q", text(res))
		}
		// The dead one comes up later: its tools appear, and clients are told.
		for len(h.changed) > 0 {
			<-h.changed
		}
		dead.refuse.Store(false)
		waitUp(t, h.p.Upstreams()[0])
		time.Sleep(time.Second) // past the SDK's debounce of list_changed
		synctest.Wait()
		if len(h.changed) == 0 {
			t.Fatal("no notifications/tools/list_changed when the dead upstream came up")
		}
		if names := h.names(); len(names) != 16 || !slices.Contains(names, "dead__echo") {
			t.Fatalf("tools after the dead upstream came up = %v", names)
		}
	})
}

func TestProxyFollowsToolListChanged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		h := start(t, ProxyConfig{}, map[string]*scripted{"s": s})
		s.add("late", "Added after the client connected.", func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
			return textResult("late"), nil
		})
		time.Sleep(time.Second) // past the SDK's debounce of list_changed, twice
		synctest.Wait()
		if !slices.Contains(h.names(), "late") {
			t.Fatalf("added tool not served: %v", h.names())
		}
		if res, _ := h.call("late", nil); text(res) != "late" {
			t.Fatalf("late: %q", text(res))
		}
		s.srv.RemoveTools("late", "crash")
		time.Sleep(time.Second)
		synctest.Wait()
		if names := h.names(); slices.Contains(names, "late") || slices.Contains(names, "crash") || len(names) != 7 {
			t.Fatalf("removed tools still served: %v", names)
		}
	})
}

func TestProxyRefusalNamesOtherServersTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := newScripted(), newScripted()
		h := start(t, ProxyConfig{Breaker: breaker.Settings{FailureThreshold: 1}, Backups: map[string][]string{"a__protoerr": {"b__echo"}}},
			map[string]*scripted{"a": a, "b": b})
		h.call("a__protoerr", nil)
		res, _ := h.call("a__protoerr", nil)
		want := "; other tools that can serve it: b__echo (available), b__protoerr (available)"
		if !strings.HasSuffix(text(res), want) {
			t.Fatalf("refusal text %q does not end with %q", text(res), want)
		}
		m := meta(t, res)
		if len(m.Alts) != 2 || m.Alts[0] != (Alt{Tool: "b__echo", Available: true}) {
			t.Fatalf("alternatives in _meta: %+v", m.Alts)
		}
	})
}

func TestUpstreamConfigErrors(t *testing.T) {
	ok := func(context.Context) (mcp.Transport, error) { return nil, errors.New("x") }
	for _, tc := range []struct {
		cfg  UpstreamConfig
		want string
	}{
		{UpstreamConfig{Connect: ok}, "Name is required"},
		{UpstreamConfig{Name: "a__b", Connect: ok}, `must not contain "__"`},
		{UpstreamConfig{Name: "a/b", Connect: ok}, "only ASCII letters"},
		{UpstreamConfig{Name: "a"}, "Connect is required"},
		{UpstreamConfig{Name: "a", Connect: ok, RestartBase: -1}, "RestartBase must not be negative"},
		{UpstreamConfig{Name: "a", Connect: ok, RestartBase: time.Minute}, "RestartMax (30s) is below RestartBase (1m0s)"},
	} {
		if _, err := NewUpstream(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewUpstream(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := NewProxy(ProxyConfig{}); err == nil || !strings.Contains(err.Error(), "Upstreams") {
		t.Errorf("NewProxy with no upstream: %v", err)
	}
	if _, err := NewProxy(ProxyConfig{Upstreams: []UpstreamConfig{{Name: "a", Connect: ok}, {Name: "a", Connect: ok}}}); err == nil ||
		!strings.Contains(err.Error(), `duplicate name "a"`) {
		t.Errorf("NewProxy with duplicate names: %v", err)
	}
}
