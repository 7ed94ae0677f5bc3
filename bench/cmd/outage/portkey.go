package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// startPortkey starts the Portkey gateway installed (npm ci) in dir with
// node, on a free loopback port (loopback.cjs pins every listener to
// 127.0.0.1), and waits (at most 20s) until it answers.
func startPortkey(ctx context.Context, dir string) (*child, string, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, "", errors.New("node not found (apt-get install -y nodejs npm)")
	}
	dir, _ = filepath.Abs(dir)
	script := filepath.Join(dir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js")
	if _, err := os.Stat(script); err != nil {
		return nil, "", fmt.Errorf("%s missing (run npm ci in %s, as outage.sh does)", script, dir)
	}
	port, err := freePort()
	if err != nil {
		return nil, "", err
	}
	c, err := startChild(node, dir, []string{"NODE_ENV=production", "TRUSTED_CUSTOM_HOSTS=127.0.0.1,localhost"},
		"--require", filepath.Join(dir, "loopback.cjs"), script, "--port="+strconv.Itoa(port), "--headless")
	if err != nil {
		return nil, "", err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := waitReady(ctx, base+"/", c, 20*time.Second); err != nil {
		c.stop()
		return nil, "", fmt.Errorf("%v; its log ends:\n%s", err, tail(c.log.String(), 1500))
	}
	return c, base + "/v1/chat/completions", nil
}

// portkeyTarget is Portkey with a fallback config primary -> backup, each
// target with its own retry (attempts = loopctl's max_retries, on the
// statuses loopctl's ladder retries, Portkey's own backoff) and
// request_timeout = loopctl's first_byte (Portkey has no breaker).
func portkeyTarget(url string, p pair) target {
	leg := func(u *upstream) map[string]any {
		return map[string]any{
			"provider":        "openai",
			"custom_host":     u.baseURL(),
			"api_key":         "sk-bench",
			"request_timeout": firstByte.Milliseconds(),
			"retry": map[string]any{
				"attempts":        maxRetries,
				"on_status_codes": []int{408, 429, 500, 502, 503, 504, 529},
			},
		}
	}
	cfg, _ := json.Marshal(map[string]any{
		"strategy": map[string]any{"mode": "fallback"},
		"targets":  []any{leg(p.primary), leg(p.backup)},
	})
	return target{name: "portkey", url: url, header: http.Header{"X-Portkey-Config": {string(cfg)}}}
}
