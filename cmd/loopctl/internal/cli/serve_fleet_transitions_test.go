package cli

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/internal/redistest"
	"github.com/loopctl/loopctl-go/llmtest"
)

// replicaLog is a log's buffer that a store's messages may write to while
// the test reads it.
type replicaLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *replicaLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// line returns the latest breaker line that holds every one of has.
func (b *replicaLog) line(has ...string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	found := ""
	for _, l := range strings.Split(b.buf.String(), "\n") {
		ok := strings.Contains(l, `"msg":"breaker"`)
		for _, h := range has {
			ok = ok && strings.Contains(l, h)
		}
		if ok {
			found = l
		}
	}
	return found
}

// replica is one serve process's gateway, sharing its breakers through the
// store at addr as serve does, with its breaker log.
func replica(t *testing.T, cfg gateway.Config, addr string) (*httptest.Server, *replicaLog) {
	t.Helper()
	buf := &replicaLog{}
	log := slog.New(slog.NewJSONHandler(buf, nil))
	opts := gateway.Options{OnTransition: logTransitions(log)}
	st, closeStore, ok := fleetStore(gateway.Store{Redis: "redis://" + addr, Prefix: "opsfleet"}, &opts, log, io.Discard)
	if !ok {
		t.Fatal("the store did not open")
	}
	t.Cleanup(closeStore)
	gw, err := gateway.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	joined(t, st)
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return srv, buf
}

// joined waits, bounded, until st has subscribed, re-read its breakers and
// answers: a replica is part of the fleet only from then on. Before, an
// act's messages may not reach it (they are re-read, named, after its
// subscription: fleet's TestFleetActOfAReRead), and under -race on a busy
// machine its first call may exceed the 50 ms StoreTimeout, so that it
// runs locally for a RetryInterval and joins with the store's state
// silently, as any replica that was down does: no act to log then.
func joined(t *testing.T, st *fleet.Store) {
	t.Helper()
	end := time.Now().Add(5 * time.Second)
	select {
	case <-st.Ready():
	case <-time.After(time.Until(end)):
		t.Fatal("the replica's store did not subscribe within 5s")
	}
	for !st.Up() {
		if time.Now().After(end) {
			t.Fatal("the replica's store did not answer within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestFleetTransitionLogNamesTheOperator: two serve replicas share their
// breakers through one real redis-server; a hold, a disable with a TTL, an
// enable, a release and a reset made through POST /admin/breakers/{model}
// on the first are logged by the second, which learns of them through the
// store, as the operator's: cause=operator, the act, the admin key's name,
// the reason and the end; never as a failure. The store holds the key's
// name, never the key.
func TestFleetTransitionLogNamesTheOperator(t *testing.T) {
	store := redistest.Start(t)
	up := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("ok")))
	defer up.Close()
	cfg := gateway.Config{
		Upstreams:  []gateway.Upstream{{Name: "up", BaseURL: up.BaseURL(), APIKey: "sk"}},
		Models:     []gateway.Model{{Name: "smart", Primary: "up/a", Chain: []string{"up/b", "up/c"}}},
		AdminKeys:  []gateway.ClientKey{{Name: "oncall", Key: "sk-admin"}},
		ClientKeys: []gateway.ClientKey{{Name: "app", Key: "sk-app"}},
	}
	a, _ := replica(t, cfg, store.Addr())
	_, logB := replica(t, cfg, store.Addr())
	post := func(path, key, body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, a.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := a.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d", path, body, resp.StatusCode)
		}
	}
	admin := func(body string) { post("/admin/breakers/smart", "sk-admin", body) }
	acts := []struct {
		name string
		do   func()
		want []string // in the second replica's line for the act
	}{
		{"hold", func() { admin(`{"action":"hold","ttl":"10m","reason":"INC-42"}`) },
			[]string{`"action":"hold"`, `"reason":"up/a held by an operator (oncall) until `, `"operator_reason":"INC-42"`, `"until":"`}},
		{"disable", func() { admin(`{"action":"disable","entry":"up/b","ttl":"5m","reason":"flaky"}`) },
			[]string{`"action":"disable"`, `"reason":"up/b disabled by an operator (oncall) until `, `"operator_reason":"flaky"`, `"until":"`}},
		{"enable", func() { admin(`{"action":"enable","entry":"up/b"}`) },
			[]string{`"action":"enable"`, `"reason":"up/b enabled by an operator (oncall)"`}},
		{"release", func() {
			admin(`{"action":"release"}`)
			post("/v1/chat/completions", "sk-app", `{"model":"smart","messages":[{"role":"user","content":"hi"}]}`) // probes
		}, []string{`"action":"hold_end"`, `"reason":"the operator's hold of up/a ended: probing it"`, `"operator_reason":"INC-42"`}},
		{"reset", func() {
			admin(`{"action":"hold","ttl":"10m","reason":"INC-43"}`)
			admin(`{"action":"reset"}`)
		}, []string{`"action":"reset"`, `"reason":"reset by an operator (oncall)"`}},
	}
	for _, act := range acts {
		act.do()
		end := time.Now().Add(5 * time.Second)
		line := ""
		for line == "" && time.Now().Before(end) {
			line = logB.line(act.want[0])
			time.Sleep(time.Millisecond)
		}
		if line == "" {
			t.Fatalf("%s: the second replica logged no breaker line with %s", act.name, act.want[0])
		}
		t.Logf("%s: the second replica logs %s", act.name, line)
		for _, w := range append(act.want, `"cause":"operator"`, `"by":"oncall"`) {
			if !strings.Contains(line, w) {
				t.Errorf("%s: the second replica's line lacks %s: %s", act.name, w, line)
			}
		}
		if strings.Contains(line, "failed") {
			t.Errorf("%s: the second replica logs an operator's act as a failure: %s", act.name, line)
		}
	}
	// the store holds the admin key's name, never the key
	const dump = `local out = {}
for _, k in ipairs(redis.call('KEYS', '*')) do
  out[#out + 1] = k
  if redis.call('TYPE', k).ok == 'hash' then
    for _, v in ipairs(redis.call('HGETALL', k)) do out[#out + 1] = v end
  end
end
return table.concat(out, '\n')`
	stored, err := redistest.Command(store.Addr(), "EVAL", dump, "0")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, "sk-admin") || !strings.Contains(stored, "(by oncall)") {
		t.Errorf("the store should hold the admin key's name and never the key; it holds:\n%s", stored)
	}
	logB.mu.Lock()
	leaked := strings.Contains(logB.buf.String(), "sk-admin")
	logB.mu.Unlock()
	if leaked {
		t.Error("the second replica's log holds the admin key")
	}
}
