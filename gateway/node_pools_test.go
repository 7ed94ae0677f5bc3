package gateway

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/llmtest"
)

// GATEWAY §11 with real clients (pinned in testdata/node/package-lock.json
// and testdata/agents/package-lock.json): @anthropic-ai/sdk with a session
// key (metadata.user_id) and Claude Code with its own session through a
// pool of three Anthropic keys, one of them failing (500), and the openai
// client through a pool of an OpenAI member and an Anthropic member
// (translated per member). Each case checks what the client sees (in the
// JS tests, or the CLI's output) and what each member saw: its own key
// only, and every session on one healthy member, its rendezvous home.
func TestNodePools(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node not found: install Node.js (Debian: apt-get install -y nodejs npm), then run `npm ci` in gateway/testdata/node and gateway/testdata/agents")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "node"))
	for _, pkg := range []string{"openai", "@anthropic-ai/sdk"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("the %s npm package is not installed: run `npm ci` in %s (test.sh does it for every committed package-lock.json)", pkg, dir)
		}
	}
	f := newPoolClientsFixture(t)
	// In order: the SDK's first request homed on the failing member trips
	// it, and the cases after it run with that member open.
	t.Run("anthropic-sdk", func(t *testing.T) { f.runSDK(t, node, dir) })
	t.Run("claude-code", f.runClaudeCode)
	t.Run("openai", func(t *testing.T) { f.runOpenAI(t, node, dir) })
	f.expectOwnKeys(t)
}

// runSDK: @anthropic-ai/sdk through pool/sonnet, sessions that cover
// every member as a home: the failing member gets one request (its first
// failure trips it) and each session's requests reach its home among the
// healthy members only, each request once.
func (f *poolClientsFixture) runSDK(t *testing.T, node, dir string) {
	sessions := f.sessions(t, "sdk-session-", f.keys[:3], f.keys[:2])
	f.runNode(t, node, dir, "anthropic.test.mjs", "LOOPCTL_POOL_SESSIONS="+strings.Join(sessions, ","))
	if got := f.ups["an3"].Count(""); got != 1 {
		t.Errorf("the failing member an3 received %d requests, want 1 (its first failure trips it: trip_threshold 1)", got)
	}
	f.expectHomes(t, f.keys[:2], sessions)
	by, n := f.servedBy("sdk-session-", []string{"an1", "an2"}), 0
	for _, s := range sessions {
		home, _, _ := strings.Cut(rendezvousHome(s, f.keys[:2]), "/")
		if got := by[s]; len(got) != 1 || got[home] != 3 {
			t.Errorf("session %s reached %v, want its 3 requests on its home %s (of three: %s)", s, got, home, rendezvousHome(s, f.keys[:3]))
		}
		n += by[s][home]
	}
	if total := f.ups["an1"].Count("") + f.ups["an2"].Count(""); total != n {
		t.Errorf("the healthy members received %d requests, want the sessions' %d", total, n)
	}
}

// runClaudeCode: Claude Code through pool/sonnet, its failing member open
// by now: the Bash round trip succeeds, with every answer of its session
// from its home.
func (f *poolClientsFixture) runClaudeCode(t *testing.T) {
	before := f.ups["an3"].Count("")
	res, out, err := runClaudeCodeAt(t, f.srv.URL, "claude")
	if err != nil || res.IsError || !strings.Contains(res.Result, "crosswire-ok") {
		t.Errorf("claude -p --model claude: %v, result %+v, want the Bash tool's output crosswire-ok in the answer\n%s", err, res, out)
	}
	if got := f.ups["an3"].Count(""); got != before {
		t.Errorf("the failing member an3 received %d requests from Claude Code while open", got-before)
	}
	f.expectClaudeCodeSession(t)
}

// runOpenAI: the openai client through pool/gpt (an OpenAI member and an
// Anthropic one): each session on its home, both members serving, each on
// its own wire, the Anthropic member's answers translated.
func (f *poolClientsFixture) runOpenAI(t *testing.T, node, dir string) {
	sessions := f.sessions(t, "oai-session-", f.keys[3:], f.keys[3:])
	f.runNode(t, node, dir, "openai.test.mjs", "LOOPCTL_POOL_SESSIONS="+strings.Join(sessions, ","))
	f.expectHomes(t, f.keys[3:], sessions)
	if got, want := f.ups["oa"].Count("")+f.ups["an"].Count(""), 3*len(sessions); got != want {
		t.Errorf("the members received %d requests, want the client's %d, each once", got, want)
	}
	for _, e := range []struct{ up, endpoint, translated string }{{"oa", "chat", ""}, {"an", "messages", "chat->messages"}} {
		if n := f.ups[e.up].Count(""); n == 0 {
			t.Errorf("the member %s served none of the openai client's requests: both should be home to some sessions", e.up)
		}
		for _, r := range f.ups[e.up].Requests() {
			if r.Endpoint != e.endpoint {
				t.Errorf("%s got a request on %s, want %s (each member on its own wire)", e.up, r.Endpoint, e.endpoint)
			}
		}
		for _, a := range f.log.served(e.up + "/") {
			if a.translated != e.translated {
				t.Errorf("an answer served by %s: x-loopctl-translated %q, want %q", a.model, a.translated, e.translated)
			}
		}
	}
}

// poolClientsDelay is every healthy member's time to first content: like
// a real deployment's, long against this machine's jitter, so that the
// members' latency estimates stay within the affinity slack (2) of each
// other and a session's home keeps serving it (SEMANTICS §9.3 rule 3b).
// Rule 4 sets a member's estimate from its first sample and moves it
// slowly after: with 40 ms, one member's first stream measured 143 ms on
// a loaded machine and its sessions' streams left home for about τ = 10 s
// (3.5 times its peer's estimate); with 250 ms, one first answer took
// 650 ms.
const poolClientsDelay = 500 * time.Millisecond

// poolClientsFixture is the gateway of TestNodePools in front of five
// scripted upstreams, each its own listener and key: an1, an2, an3
// (Anthropic keys of one model; an3 answers 500), oa (OpenAI) and an
// (Anthropic), with every answer's headers recorded.
type poolClientsFixture struct {
	ups  map[string]*llmtest.Server
	keys []string // the members' targets: an1, an2, an3, oa, an
	srv  *httptest.Server
	log  *poolClientsLog
}

func newPoolClientsFixture(t *testing.T) *poolClientsFixture {
	t.Helper()
	f := &poolClientsFixture{ups: map[string]*llmtest.Server{}, log: &poolClientsLog{}}
	cfg := poolClientsConfig()
	for _, name := range []string{"an1", "an2", "an3", "an"} {
		script := poolClientsMember(name)
		if name == "an3" {
			script = llmtest.Always(llmtest.Error(500))
		}
		f.ups[name] = llmtest.NewAnthropic(script)
		cfg.Upstreams = append(cfg.Upstreams, Upstream{Name: name, API: APIAnthropic, BaseURL: f.ups[name].BaseURL(), APIKey: "sk-" + name})
	}
	f.ups["oa"] = llmtest.NewOpenAI(poolClientsMember("oa"))
	cfg.Upstreams = append(cfg.Upstreams, Upstream{Name: "oa", BaseURL: f.ups["oa"].BaseURL(), APIKey: "sk-oa"})
	f.keys = []string{"an1/claude-sonnet-4-5", "an2/claude-sonnet-4-5", "an3/claude-sonnet-4-5", "oa/gpt-4.1", "an/claude-sonnet-4-5"}
	gw, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.log.figures = func() string { return poolFigures(gw, "sonnet", "gpt") }
	f.srv = httptest.NewServer(f.log.wrap(gw))
	t.Cleanup(func() {
		f.srv.Close()
		gw.Close()
		for _, s := range f.ups {
			s.Close()
		}
	})
	return f
}

// poolClientsConfig is TestNodePools' config without its upstreams:
// pool/sonnet (three Anthropic keys) for model claude, pool/gpt (an
// OpenAI and an Anthropic member) for model gpt.
func poolClientsConfig() Config {
	return Config{
		ClientKeys: []ClientKey{{Name: "node", Key: "sk-node"}},
		Pools: []Pool{
			// trip_threshold 1: the failing key is out after its first
			// failure, so every session's home is a healthy member from
			// then on (a failing member that has not tripped yet is its
			// sessions' home over the cost bound: they go by rule 3c).
			{Name: "sonnet", Members: []PoolMember{{Target: "an1/claude-sonnet-4-5"}, {Target: "an2/claude-sonnet-4-5"}, {Target: "an3/claude-sonnet-4-5"}},
				Breaker: Breaker{TripThreshold: 1, RecoveryTimeout: 10 * time.Minute}},
			{Name: "gpt", Members: []PoolMember{{Target: "oa/gpt-4.1"}, {Target: "an/claude-sonnet-4-5"}}},
		},
		Models: []Model{{Name: "claude", Primary: "pool/sonnet"}, {Name: "gpt", Primary: "pool/gpt"}},
	}
}

// poolClientsMember is a healthy member's script, each answer after
// poolClientsDelay: Claude Code's Bash round trip (agentCLIScript), else
// "hello from <name>".
func poolClientsMember(name string) llmtest.Script {
	return llmtest.Delayed(poolClientsDelay, func(r llmtest.Request) llmtest.Reply {
		for _, tool := range r.Tools {
			if tool.Name == "Bash" {
				return agentCLIScript(r)
			}
		}
		if r.Last().Role == "tool" {
			return agentCLIScript(r)
		}
		return llmtest.Chunked("hello from ", name)
	})
}

// poolFigures is what the pools names know of each member now (its two
// latency estimates and in flight), for a failing case's log.
func poolFigures(gw *Gateway, names ...string) string {
	var b strings.Builder
	for _, name := range names {
		pd := gw.poolNamed(name)
		for i := range pd.members {
			st := pd.p.Status(time.Now(), i)
			fmt.Fprintf(&b, "[%s s=%v w=%v f=%d] ", st.Name, st.Stream.Round(time.Millisecond), st.Whole.Round(time.Millisecond), st.InFlight)
		}
	}
	return b.String()
}

// runNode runs one JS test file of testdata/node/pools with node --test,
// env added to the environment crosswire/shared.mjs reads.
func (f *poolClientsFixture) runNode(t *testing.T, node, dir, file string, env ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=tap", filepath.Join("pools", file))
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "LOOPCTL_GATEWAY="+f.srv.URL, "LOOPCTL_GATEWAY_KEY=sk-node"), env...)
	out, err := cmd.CombinedOutput()
	t.Logf("%s(%.1fs)", out, time.Since(start).Seconds())
	if err != nil || !strings.Contains(string(out), "# fail 0") {
		t.Errorf("node --test %s: %v (its failing cases are above)", file, err)
	}
}

// sessions returns session keys prefix0, prefix1, ... enough that every
// member of all is the rendezvous home (SEMANTICS §9.3 rule 3b) of at
// least two of them, and every member of healthy the home of two among
// healthy: the case then reaches every member, the failing one included.
func (f *poolClientsFixture) sessions(t *testing.T, prefix string, all, healthy []string) []string {
	t.Helper()
	need := func(set []string) map[string]int {
		m := map[string]int{}
		for _, k := range set {
			m[k] = 2
		}
		return m
	}
	wantAll, wantHealthy := need(all), need(healthy)
	var out []string
	for i := 0; i < 200 && (len(wantAll) > 0 || len(wantHealthy) > 0); i++ {
		key := fmt.Sprintf("%s%d", prefix, i)
		out = append(out, key)
		for _, c := range []struct {
			want map[string]int
			set  []string
		}{{wantAll, all}, {wantHealthy, healthy}} {
			h := rendezvousHome(key, c.set)
			if c.want[h]--; c.want[h] <= 0 {
				delete(c.want, h)
			}
		}
	}
	if len(wantAll) > 0 || len(wantHealthy) > 0 {
		t.Fatalf("200 session keys do not cover every member as a home: %v %v", wantAll, wantHealthy)
	}
	return out
}

// servedBy maps each session key with prefix to the upstreams among names
// whose requests carried it, with their counts.
func (f *poolClientsFixture) servedBy(prefix string, names []string) map[string]map[string]int {
	by := map[string]map[string]int{}
	for _, name := range names {
		for _, r := range f.ups[name].Requests() {
			if s := sessionOfBody(r.Body); strings.HasPrefix(s, prefix) {
				if by[s] == nil {
					by[s] = map[string]int{}
				}
				by[s][name]++
			}
		}
	}
	return by
}

// expectHomes checks that each session's answers all came from one
// member of healthy (the targets): its rendezvous home among them.
func (f *poolClientsFixture) expectHomes(t *testing.T, healthy, sessions []string) {
	t.Helper()
	for _, s := range sessions {
		home := rendezvousHome(s, healthy)
		if got := f.log.bySession(s); len(got[s]) != 1 || got[s][home] == 0 {
			t.Errorf("session %s was served by %v, want all of its requests by its home %s\n%s", s, got[s], home, f.log.dump("*"))
		}
	}
}

// expectClaudeCodeSession checks that every answer of Claude Code's
// session (its metadata.user_id names it) came from one healthy member,
// its home among them. Its answers other than 200 are not counted: the
// first request of a run carries a system turn inside messages, which
// llmtest's Messages checks refuse with 400 on every member (a 400 moves
// on inside the pool with no verdict); Claude Code then sends it again
// without.
func (f *poolClientsFixture) expectClaudeCodeSession(t *testing.T) {
	t.Helper()
	n := 0
	for s, got := range f.log.bySession("") {
		if strings.HasPrefix(s, "sdk-session-") || strings.HasPrefix(s, "oai-session-") {
			continue
		}
		n++
		if home := rendezvousHome(s, f.keys[:2]); len(got) != 1 || got[home] == 0 {
			t.Errorf("Claude Code's session %q was served by %v, want all of its requests by its home %s\n%s", s, got, home, f.log.dump(s))
		}
	}
	if n != 1 {
		t.Errorf("Claude Code's answers carried %d sessions (metadata.user_id), want its one", n)
	}
}

// expectOwnKeys checks that every request a member received carried that
// member's key only, never the client's.
func (f *poolClientsFixture) expectOwnKeys(t *testing.T) {
	t.Helper()
	for name, s := range f.ups {
		for _, r := range s.Requests() {
			got := r.Header.Get("X-Api-Key")
			if name == "oa" {
				got = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
			}
			if got != "sk-"+name || strings.Contains(fmt.Sprint(r.Header), "sk-node") {
				t.Errorf("%s received a request with key %q (headers %v), want its own sk-%s", name, got, r.Header, name)
			}
		}
	}
}
