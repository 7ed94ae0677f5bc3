package mcptool

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// harness is a Proxy in front of scripted servers, driven by a go-sdk client
// over in-memory transports.
type harness struct {
	t       *testing.T
	p       *Proxy
	cs      *mcp.ClientSession
	changed chan struct{} // the client got notifications/tools/list_changed
	calls   chan CallInfo
}

// start builds and starts a Proxy from cfg (upstreams given by name) and
// connects a client. Everything is closed at the end of the test.
func start(t *testing.T, cfg ProxyConfig, servers map[string]*scripted) *harness {
	t.Helper()
	h := &harness{t: t, changed: make(chan struct{}, 100), calls: make(chan CallInfo, 1000)}
	names := make([]string, 0, len(servers))
	for name := range servers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		cfg.Upstreams = append(cfg.Upstreams, UpstreamConfig{Name: name, Connect: servers[name].connect, RestartBase: 100 * time.Millisecond, RestartMax: time.Second})
	}
	cfg.OnCall = func(ci CallInfo) { h.calls <- ci }
	p, err := NewProxy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h.p = p
	ctx := context.Background()
	p.Start(ctx)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { h.changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.cs = cs
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
		p.Close()
		for _, s := range servers {
			s.crash()
		}
	})
	return h
}

// call calls name through the proxy's client; a JSON-RPC error fails the test.
func (h *harness) call(name string, args any) (*mcp.CallToolResult, CallInfo) {
	h.t.Helper()
	res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("call %s: protocol error reached the client: %v", name, err)
	}
	select {
	case ci := <-h.calls:
		return res, ci
	default:
		h.t.Fatalf("call %s: no CallInfo", name)
		return nil, CallInfo{}
	}
}

// names lists the tools the client sees.
func (h *harness) names() []string {
	h.t.Helper()
	var names []string
	for tool, err := range h.cs.Tools(context.Background(), nil) {
		if err != nil {
			h.t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// meta returns the CallMeta of a failed result.
func meta(t *testing.T, res *mcp.CallToolResult) CallMeta {
	t.Helper()
	raw, ok := res.Meta[MetaKey]
	if !ok {
		t.Fatalf("no _meta[%q] in %+v", MetaKey, res)
	}
	b, _ := json.Marshal(raw)
	var m CallMeta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func text(res *mcp.CallToolResult) string { return ResultText(res) }

func TestProxyListsAndForwards(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		h := start(t, ProxyConfig{}, map[string]*scripted{"s": s})
		want := []string{"badparams", "crash", "echo", "hang", "protoerr", "slow", "toolerr", "weather"}
		if got := h.names(); !slices.Equal(got, want) {
			t.Fatalf("tools = %v, want %v (unchanged names with one upstream)", got, want)
		}
		res, ci := h.call("echo", map[string]any{"text": "hi"})
		if res.IsError || text(res) != "hi" || ci.Outcome != OutcomeSuccess || ci.Breaker != "s/echo" {
			t.Fatalf("echo: %+v %+v", res, ci)
		}
		res, _ = h.call("weather", nil)
		if b, _ := json.Marshal(res.StructuredContent); string(b) != `{"temp":21}` {
			t.Fatalf("structured content not passed through: %s", b)
		}
	})
}

func TestProxyToolErrorsPassThroughUncounted(t *testing.T) {
	for _, count := range []bool{false, true} {
		t.Run(map[bool]string{false: "default", true: "CountToolErrors"}[count], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newScripted()
				cfg := ProxyConfig{Breaker: breaker.Settings{FailureThreshold: 3}}
				if count {
					cfg.Tools = map[string]ToolOptions{"s/toolerr": {CountToolErrors: true}}
				}
				h := start(t, cfg, map[string]*scripted{"s": s})
				for range 5 {
					res, ci := h.call("toolerr", nil)
					if ci.Outcome == OutcomeRefused {
						break
					}
					if !res.IsError || text(res) != "bad input: n must be positive" || ci.Outcome != OutcomeToolError {
						t.Fatalf("isError result not passed through unchanged: %q %+v", text(res), ci)
					}
				}
				st := h.p.Registry().Breaker("s/toolerr").State()
				if want := map[bool]breaker.State{false: breaker.Closed, true: breaker.Open}[count]; st != want {
					t.Fatalf("breaker %v after 5 isError results, want %v", st, want)
				}
				if !count && s.called("toolerr") != 5 {
					t.Fatalf("server saw %d calls, want 5", s.called("toolerr"))
				}
			})
		})
	}
}

func TestProxyInvalidParamsCarryNoVerdict(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		h := start(t, ProxyConfig{}, map[string]*scripted{"s": s})
		for range 5 {
			res, ci := h.call("badparams", nil)
			if !res.IsError || ci.Outcome != OutcomeInvalidArguments || !strings.Contains(text(res), "invalid arguments for tool 'badparams'") {
				t.Fatalf("badparams: %q %+v", text(res), ci)
			}
		}
		if st := h.p.Registry().Stats("s/badparams"); st.Failures != 0 || h.p.Registry().Breaker("s/badparams").State() != breaker.Closed {
			t.Fatalf("invalid params counted: %+v", st)
		}
	})
}

func TestProxyTimeoutCancelsUpstreamAndCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		h := start(t, ProxyConfig{Timeout: time.Minute, Tools: map[string]ToolOptions{"s/hang": {Timeout: 2 * time.Second}}},
			map[string]*scripted{"s": s})
		began := time.Now()
		res, ci := h.call("hang", nil)
		if d := time.Since(began); d != 2*time.Second {
			t.Fatalf("hang returned after %v, want its 2s timeout", d)
		}
		s.waitCancelled(t, "hang")
		m := meta(t, res)
		if !res.IsError || ci.Outcome != OutcomeTimeout || m.Outcome != OutcomeTimeout || m.Timeout != 2000 ||
			!strings.HasPrefix(text(res), "tool 'hang' (server 's') timed out after 2s") {
			t.Fatalf("timeout result: %q %+v %+v", text(res), ci, m)
		}
		if st := h.p.Registry().Stats("s/hang"); st.Failures != 1 {
			t.Fatalf("timeout not counted: %+v", st)
		}
		// SEMANTICS §1, rev 3: the breaker dates the timeout at the call's start.
		if lf := h.p.Registry().Breaker("s/hang").Snapshot().LastFailure; !lf.Equal(began) {
			t.Fatalf("LastFailure %v, want the call's start %v (2s earlier than its end)", lf, began)
		}
	})
}

func TestProxyTripsAndRefuses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		h := start(t, ProxyConfig{Breaker: breaker.Settings{FailureThreshold: 2, RecoveryDuration: 30 * time.Second}},
			map[string]*scripted{"s": s})
		for range 2 {
			res, ci := h.call("protoerr", nil)
			if !res.IsError || ci.Outcome != OutcomeFailure || !strings.Contains(text(res), "internal boom") {
				t.Fatalf("protocol error from upstream: %q %+v", text(res), ci)
			}
		}
		res, ci := h.call("protoerr", nil)
		m := meta(t, res)
		if ci.Outcome != OutcomeRefused || !res.IsError || s.called("protoerr") != 2 {
			t.Fatalf("third call: %+v, server calls %d", ci, s.called("protoerr"))
		}
		if want := "tool temporarily unavailable: circuit breaker open for tool 'protoerr' (server 's'); retry in 30s; no other tool can serve it"; text(res) != want {
			t.Fatalf("refusal text\n got %q\nwant %q", text(res), want)
		}
		if m.Outcome != OutcomeRefused || m.State != "open" || m.RetryMs != 30000 || m.Breaker != "s/protoerr" || m.Tool != "protoerr" {
			t.Fatalf("refusal meta: %+v", m)
		}
		time.Sleep(30 * time.Second) // the cooldown: the next call is the probe
		_, ci = h.call("protoerr", nil)
		if !ci.Probe || ci.Outcome != OutcomeFailure || s.called("protoerr") != 3 {
			t.Fatalf("probe: %+v", ci)
		}
	})
}

func TestProxyRefusalKeepsStructuredContentOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		h := start(t, ProxyConfig{Breaker: breaker.Settings{FailureThreshold: 1}}, map[string]*scripted{"s": s})
		s.crash() // the next call fails, and trips the weather tool's breaker
		time.Sleep(time.Millisecond)
		h.call("weather", nil)
		res, ci := h.call("weather", nil)
		if ci.Outcome != OutcomeRefused || res.StructuredContent != nil {
			t.Fatalf("refusal of a tool with an outputSchema: %+v, structuredContent %v", ci, res.StructuredContent)
		}
		meta(t, res)
	})
}

func TestProxyProbeBoundedByLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		h := start(t, ProxyConfig{Timeout: 10 * time.Second,
			Breaker: breaker.Settings{FailureThreshold: 1, RecoveryDuration: 5 * time.Second, ProbeTimeout: time.Second}},
			map[string]*scripted{"s": s})
		h.call("hang", nil) // cut at 10s: trips
		s.waitCancelled(t, "hang")
		time.Sleep(5 * time.Second)
		began := time.Now()
		_, ci := h.call("hang", nil)
		if d := time.Since(began); !ci.Probe || ci.Outcome != OutcomeTimeout || d != time.Second {
			t.Fatalf("probe: %+v after %v, want a timeout at the 1s lease", ci, d)
		}
		s.waitCancelled(t, "hang")
	})
}

func TestProxyRelaysProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newScripted()
		s.srv.AddTool(&mcp.Tool{Name: "progress", InputSchema: objectSchema},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				token := req.Params.GetProgressToken()
				if token == nil {
					return textResult("no token"), nil
				}
				for i := range 2 { // a step of work, then its progress
					time.Sleep(100 * time.Millisecond)
					req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i + 1), Total: 2})
				}
				time.Sleep(100 * time.Millisecond)
				return textResult(fmt.Sprint("token ", token)), nil
			})
		h := start(t, ProxyConfig{}, map[string]*scripted{"s": s})
		got := make(chan *mcp.ProgressNotificationParams, 10)
		client := mcp.NewClient(&mcp.Implementation{Name: "progress-client", Version: "1"}, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { got <- req.Params },
		})
		ct, st := mcp.NewInMemoryTransports()
		ss, err := h.p.Server().Connect(context.Background(), st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := client.Connect(context.Background(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { cs.Close(); ss.Wait() }()
		params := &mcp.CallToolParams{Name: "progress"}
		params.SetProgressToken("client-token")
		res, err := cs.CallTool(context.Background(), params)
		if err != nil || !strings.HasPrefix(text(res), "token loopctl-") {
			t.Fatalf("the upstream did not get the proxy's own token: %v %q", err, text(res))
		}
		<-h.calls
		synctest.Wait()
		if len(got) != 2 {
			t.Fatalf("relayed %d progress notifications, want 2", len(got))
		}
		for i := range 2 {
			n := <-got
			if n.ProgressToken != "client-token" || n.Progress != float64(i+1) || n.Total != 2 {
				t.Fatalf("progress %d: %+v", i, n)
			}
		}
	})
}
