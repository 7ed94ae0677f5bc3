package cli

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/fleet"
	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/llmtest"
)

// breakerLog is serve's log: the gateway, and a store's messages, write to
// it while the test reads it.
type breakerLog struct{ syncBuffer }

// reset empties the log, so that the next line read is the next act's.
func (b *breakerLog) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.b.Reset()
}

// line returns the latest breaker line that holds every one of has.
func (b *breakerLog) line(has ...string) string {
	found := ""
	for _, l := range strings.Split(b.String(), "\n") {
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

// transitionConfig is a gateway config for the transition log tests: model
// smart, primary up/a then chain, on an upstream that always answers, and
// the admin key sk-admin named oncall.
func transitionConfig(t *testing.T, chain ...string) gateway.Config {
	t.Helper()
	up := llmtest.NewOpenAI(llmtest.Always(llmtest.Text("ok")))
	t.Cleanup(up.Close)
	return gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "up", BaseURL: up.BaseURL(), APIKey: "sk"}},
		Models:    []gateway.Model{{Name: "smart", Primary: "up/a", Chain: chain}},
		AdminKeys: []gateway.ClientKey{{Name: "oncall", Key: "sk-admin"}},
	}
}

// loggingGateway is one serve process's gateway for cfg behind a test
// server, logging its breaker transitions as serve does, with its log. With
// a store address (host:port) it shares its breakers through that
// redis-server as serve does; with "" it keeps them in memory.
func loggingGateway(t *testing.T, cfg gateway.Config, store string) (*httptest.Server, *breakerLog) {
	t.Helper()
	buf := &breakerLog{}
	log := slog.New(slog.NewJSONHandler(buf, nil))
	opts := gateway.Options{OnTransition: logTransitions(log)}
	var st *fleet.Store
	if store != "" {
		var (
			closeStore func()
			ok         bool
		)
		st, closeStore, ok = fleetStore(gateway.Store{Redis: "redis://" + store, Prefix: "opsfleet"}, &opts, log, io.Discard)
		if !ok {
			t.Fatal("the store did not open")
		}
		t.Cleanup(closeStore)
	}
	gw, err := gateway.New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(gw.Close)
	if st != nil {
		joined(t, st) // the gateway's breakers registered
	}
	srv := httptest.NewServer(gw)
	t.Cleanup(srv.Close)
	return srv, buf
}

// joined waits, bounded, until st has subscribed, re-read its breakers and
// answers: a replica is part of the fleet only from then on. Before, an
// act's messages may not reach it (its re-read after subscribing names the
// act: fleet's TestFleetActOfAReRead), and under -race on a busy machine
// its first call may exceed the 50 ms StoreTimeout, so that it runs
// locally for a RetryInterval and joins with the store's state silently,
// as any replica that was down does: no act of its own to log then.
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

// postAs posts the JSON body to path on srv with key as its bearer token and
// returns the answer's status.
func postAs(t *testing.T, srv *httptest.Server, path, key, body string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
