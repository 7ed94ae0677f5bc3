package cli

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/internal/redistest"
)

// TestFleetTransitionLogNamesTheOperator: two serve replicas share their
// breakers through one real redis-server; a hold, a disable with a TTL, an
// enable, a release and a reset made through POST /admin/breakers/{model}
// on the first are logged by the second, which learns of them through the
// store, as the operator's: cause=operator, the act, the admin key's name,
// the reason and the end; never as a failure. The store holds the key's
// name, never the key.
func TestFleetTransitionLogNamesTheOperator(t *testing.T) {
	store := redistest.Start(t)
	cfg := transitionConfig(t, "up/b", "up/c")
	cfg.ClientKeys = []gateway.ClientKey{{Name: "app", Key: "sk-app"}}
	a, _ := loggingGateway(t, cfg, store.Addr())
	_, logB := loggingGateway(t, cfg, store.Addr())
	post := func(path, key, body string) {
		t.Helper()
		if code := postAs(t, a, path, key, body); code != http.StatusOK {
			t.Fatalf("%s %s: %d", path, body, code)
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
	if strings.Contains(logB.String(), "sk-admin") {
		t.Error("the second replica's log holds the admin key")
	}
}
