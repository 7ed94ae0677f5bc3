package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/gateway"
	"github.com/loopctl/loopctl-go/llmtest"
)

// startRedis starts a redis-server on a free loopback port and returns its
// URL; it is stopped when the test ends.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatal("redis-server not found: install it (Debian: apt-get install -y redis-server); test.sh does")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return fmt.Sprintf("redis://127.0.0.1:%d/0", port)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return ""
}

// Two gateways sharing a store behave as one breaker: the primary tripped
// through one is in fallback on the other.
func TestServeSharedBreakers(t *testing.T) {
	url := startRedis(t)
	up := llmtest.NewOpenAI(llmtest.ByModel(map[string]llmtest.Script{
		"a": llmtest.Always(llmtest.Error(401)),
		"b": llmtest.Always(llmtest.Text("from b")),
	}))
	defer up.Close()
	cfg := gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "up", BaseURL: up.BaseURL()}},
		Models:    []gateway.Model{{Name: "m", Primary: "up/a", Chain: []string{"up/b"}}},
		Store:     gateway.Store{Redis: url, Prefix: fmt.Sprintf("t%d", time.Now().UnixNano())},
	}
	var addrs []string
	for range 2 {
		addr, stop, code := startServe(t, serveSettings{cfg: cfg, logFormat: "text", grace: time.Second}, io.Discard, io.Discard)
		t.Cleanup(func() { stop(); <-code })
		addrs = append(addrs, addr)
	}
	post := func(addr string) *http.Response {
		res, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	if res := post(addrs[0]); res.StatusCode != 200 || res.Header.Get("X-Loopctl-Attempts") != "4" {
		t.Fatalf("first gateway: %d %v", res.StatusCode, res.Header)
	}
	// The second gateway routes to the chain at once.
	deadline := time.Now().Add(2 * time.Second)
	for {
		res := post(addrs[1])
		if res.Header.Get("X-Loopctl-Model") == "up/b" && res.Header.Get("X-Loopctl-Attempts") == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("second gateway did not see the trip: %v", res.Header)
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := http.Get("http://" + addrs[1] + "/readyz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("readyz: %v %v", err, res)
	}
	res.Body.Close()
	http.DefaultClient.CloseIdleConnections()
}
