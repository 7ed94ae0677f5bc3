package gateway

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/llmtest"
)

// reloadConfig is the YAML of TestLiveReload: model a trips on its first
// failure (its primary always fails), b, c and d serve; keys from files.
const reloadConfig = `
client_keys: [{name: team, key_file: KEYS/client}]
admin_keys: [{name: oncall, key_file: KEYS/admin}]
upstreams: [{name: up, base_url: UP}]
models:
  - {name: a, primary: up/fail, chain: [up/ok], breaker: {trip_threshold: 1, recovery_timeout: 1h}}
  - {name: b, primary: up/ok, chain: [up/ok2], breaker: {recovery_timeout: 1m}}
  - {name: c, primary: up/ok}
  - {name: d, primary: up/ok}
`

// liveFixture is a Live gateway serving a config file, with its key files.
type liveFixture struct {
	t         *testing.T
	dir, file string
	up        *llmtest.Server
	live      *Live
	srv       *httptest.Server
}

func newLiveFixture(t *testing.T) *liveFixture {
	t.Helper()
	f := &liveFixture{t: t, dir: t.TempDir()}
	f.up = llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"fail": llmtest.Always(llmtest.Error(503)), "ok": llmtest.Always(llmtest.Text("ok")), "ok2": llmtest.Always(llmtest.Text("ok2")),
	}))
	t.Cleanup(f.up.Close)
	f.file = filepath.Join(f.dir, "loopctl.yaml")
	f.writeKey("client", "sk-old")
	f.writeKey("admin", "sk-admin")
	f.writeConfig(reloadConfig)
	cfg, err := LoadConfig(f.file)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f.live = NewLive(g, f.file, nil)
	f.srv = httptest.NewServer(f.live)
	t.Cleanup(func() { f.srv.Close(); g.Close() })
	return f
}

func (f *liveFixture) writeKey(name, key string) {
	if err := os.WriteFile(filepath.Join(f.dir, name), []byte(key+"\n"), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

func (f *liveFixture) writeConfig(text string) {
	text = strings.NewReplacer("KEYS", f.dir, "UP", f.up.BaseURL()).Replace(text)
	if err := os.WriteFile(f.file, []byte(text), 0o600); err != nil {
		f.t.Fatal(err)
	}
}

// do sends a request with key and returns the status and body.
func (f *liveFixture) do(method, path, key, body string) (int, string) {
	f.t.Helper()
	req, _ := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func (f *liveFixture) chat(model, key string) int {
	code, _ := f.do("POST", "/v1/chat/completions", key, chatBody(model, false))
	return code
}

// TestLiveReload: a reload keeps the breakers of models whose primary and
// chain are unchanged (an open one open until the same time, a hold and a
// disable in force) with their new settings, starts changed ones in Primary, drops removed ones, rotates the
// keys read from files, and says what needs a restart; a config that fails a
// check is refused by key path and the one in force keeps serving.
func TestLiveReload(t *testing.T) {
	f := newLiveFixture(t)
	if f.chat("a", "sk-old") != 200 {
		t.Fatal("a: not served by its chain")
	}
	g0 := f.live.Gateway()
	a0, b0 := g0.models["a"].mgr, g0.models["b"].mgr
	openUntil := a0.Snapshot().CooldownEnds
	if a0.State() != fallback.Fallback || openUntil.IsZero() {
		t.Fatalf("a: %v, cooldown ends %v; want tripped", a0.State(), openUntil)
	}
	holdUntil := time.Now().Add(time.Hour).Truncate(time.Second)
	b0.Hold(holdUntil, "INC-42")
	if err := b0.Disable("up/ok2", time.Time{}, "flaky"); err != nil {
		t.Fatal(err)
	}
	f.writeKey("client", "sk-new")
	f.writeConfig(strings.NewReplacer("recovery_timeout: 1m", "recovery_timeout: 5m", "{name: c, primary: up/ok}", "{name: c, primary: up/ok2}",
		"  - {name: d, primary: up/ok}\n", "", "upstreams:", "listen: 127.0.0.1:4999\nupstreams:").Replace(reloadConfig))
	if code, body := f.do("POST", "/admin/reload", "sk-old", ""); code != 401 {
		t.Fatalf("reload with a client key: %d %s", code, body)
	}
	code, body := f.do("POST", "/admin/reload", "sk-admin", "")
	var rep Reloaded
	if err := json.Unmarshal([]byte(body), &rep); code != 200 || err != nil {
		t.Fatalf("reload: %d %s", code, body)
	}
	if got := strings.Join(rep.Kept, ",") + "|" + strings.Join(rep.Started, ",") + "|" + strings.Join(rep.Dropped, ",") + "|" + strings.Join(rep.Restart, ","); got != "a,b|c|d|listen" {
		t.Fatalf("reloaded kept|started|dropped|restart = %s", got)
	}
	g1 := f.live.Gateway()
	if g1.models["a"].mgr != a0 || a0.State() != fallback.Fallback || !a0.Snapshot().CooldownEnds.Equal(openUntil) {
		t.Fatalf("a: breaker not kept (%v, until %v, was %v)", a0.State(), a0.Snapshot().CooldownEnds, openUntil)
	}
	if g1.models["b"].mgr != b0 || g1.models["b"].settings.RecoveryTimeout != 5*time.Minute {
		t.Fatalf("b: breaker not kept with its new recovery_timeout (%v)", g1.models["b"].settings.RecoveryTimeout)
	}
	if s := b0.Snapshot(); !s.HoldUntil.Equal(holdUntil) || s.HoldReason != "INC-42" || s.Chain[0].Available {
		t.Fatalf("b: the hold or the disable did not survive the reload: %+v", s)
	}
	if g1.models["c"].mgr.Snapshot().State != fallback.Primary || g1.models["d"] != nil || g1.cfg.Listen != "" {
		t.Fatal("c not new, d not dropped, or listen applied")
	}
	if f.chat("c", "sk-old") != 401 || f.chat("c", "sk-new") != 200 {
		t.Fatal("the rotated client key is not the one in force")
	}
	if v := testutil.ToFloat64(f.live.ok); v != 1 {
		t.Fatalf("loopctl_config_last_reload_successful = %v", v)
	}
	// A config that fails: refused by key path, the one in force serves.
	f.writeConfig(strings.Replace(reloadConfig, "trip_threshold: 1,", "trip_threshold: 1, bogus: 2,", 1))
	code, body = f.do("POST", "/admin/reload", "sk-admin", "")
	if code != 400 || !strings.Contains(body, `"path":"models[0].breaker.bogus","message":"unknown key`) {
		t.Fatalf("bad reload: %d %s", code, body)
	}
	if f.live.Gateway() != g1 || f.chat("c", "sk-new") != 200 || testutil.ToFloat64(f.live.ok) != 0 {
		t.Fatal("a refused config changed what serves, or the gauge is not 0")
	}
	code, body = f.do("GET", "/admin/config", "sk-admin", "")
	var info ConfigInfo
	if err := json.Unmarshal([]byte(body), &info); code != 200 || err != nil || info.LastReloadSuccessful || info.File != f.file || len(info.SHA256) != 64 || len(info.Problems) != 1 {
		t.Fatalf("admin/config: %d %s", code, body)
	}
}

// TestStoreNameDigest: a configured model's store name changes with its
// primary and chain, and only with them, and is fleet.StoreName's.
func TestStoreNameDigest(t *testing.T) {
	a := storeName(Model{Name: "m", Primary: "up/a", Chain: []string{"up/b"}})
	for _, tc := range []struct {
		m    Model
		same bool
	}{
		{Model{Name: "m", Primary: "up/a", Chain: []string{"up/b"}, Attempts: 9}, true},
		{Model{Name: "m", Primary: "up/a", Chain: []string{"up/c"}}, false},
		{Model{Name: "m", Primary: "up/b", Chain: []string{"up/a"}}, false},
		{Model{Name: "m", Primary: "up/a"}, false},
	} {
		if got := storeName(tc.m); (got == a) != tc.same || !strings.HasPrefix(got, "m@") {
			t.Errorf("storeName(%+v) = %q (first %q)", tc.m, got, a)
		}
	}
	if m := (Model{Name: "m", Primary: "up/a", Chain: []string{"up/b", "up/c"}}); storeName(m) != fleet.StoreName(m.Name, m.Primary, m.Chain) {
		t.Errorf("storeName %q, fleet.StoreName %q", storeName(m), fleet.StoreName(m.Name, m.Primary, m.Chain))
	}
	if got := storeName(Model{Name: "up/x", Primary: "up/x"}); got != "up/x" {
		t.Errorf("a direct name's store name is %q", got)
	}
}

// TestReloadTakesTheRetryBudget: retry.budget and retry.budget_burst are
// read again on a reload, like the rest of the config (an explicit 0: no
// same-model retries on every model).
func TestReloadTakesTheRetryBudget(t *testing.T) {
	cfg := Config{Upstreams: []Upstream{{Name: "up", BaseURL: "http://upstream.test/v1"}},
		Models: []Model{{Name: "m", Primary: "up/a", Chain: []string{"up/b"}}}}
	g, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cfg.Retry.Budget, cfg.Retry.BudgetBurst = RetryBudgetNone, 3
	next, _, err := g.Reload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if next.retries.budget.Budget != RetryBudgetNone || next.retries.budget.BudgetBurst != 3 || !next.models["m"].noRetry {
		t.Errorf("after the reload: budget %+v, no retries %v", next.retries.budget, next.models["m"].noRetry)
	}
}

// TestReloadKeepsAHold: a model held by an operator stays held across a
// reload that changes its chain (SEMANTICS §8.5: a hold survives a reload
// unless its model is removed), though its new breaker starts afresh
// otherwise (GATEWAY §9.3); a removed model's hold goes with it.
func TestReloadKeepsAHold(t *testing.T) {
	cfg := Config{Upstreams: []Upstream{{Name: "up", BaseURL: "http://upstream.test/v1"}},
		Models: []Model{{Name: "m", Primary: "up/a", Chain: []string{"up/b"}}, {Name: "n", Primary: "up/a"}}}
	g, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	until := time.Now().Add(time.Hour).Truncate(time.Second)
	g.models["m"].mgr.Hold(until, "INC-7 (by oncall)")
	cfg.Models[0].Chain = []string{"up/c"}
	next, rep, err := g.Reload(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if !slices.Contains(rep.Started, "m") {
		t.Fatalf("m with a new chain was not started anew: %+v", rep)
	}
	s := next.models["m"].mgr.Snapshot()
	if s.State != fallback.Fallback || !s.HoldUntil.Equal(until) || s.HoldReason != "INC-7 (by oncall)" {
		t.Fatalf("after the reload m is %v, held until %v (%q); want held until %v", s.State, s.HoldUntil, s.HoldReason, until)
	}
	if s := next.models["n"].mgr.Snapshot(); s.State != fallback.Primary || !s.HoldUntil.IsZero() {
		t.Fatalf("n, never held, is %v held until %v", s.State, s.HoldUntil)
	}
}
