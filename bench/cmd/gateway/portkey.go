package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// portkeyGateway is a running Portkey gateway.
type portkeyGateway struct {
	target target
	cmd    *exec.Cmd
	done   chan error
	log    *bytes.Buffer
}

// startPortkey starts the Portkey gateway installed (npm ci) in dir with
// node, on a free loopback port, routing to the OpenAI-compatible upstream
// at upURL, and waits (at most 20s) until it answers.
func startPortkey(dir, upURL string) (*portkeyGateway, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, errors.New("node not found (apt-get install -y nodejs npm)")
	}
	dir, _ = filepath.Abs(dir)
	script := filepath.Join(dir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("%s missing (run npm ci in %s)", script, dir)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	log := &bytes.Buffer{}
	cmd := exec.Command(node, "--require", filepath.Join(dir, "loopback.cjs"), script, "--port="+strconv.Itoa(port), "--headless")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_ENV=production", "TRUSTED_CUSTOM_HOSTS=127.0.0.1,localhost")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pk := &portkeyGateway{cmd: cmd, done: make(chan error, 1), log: log}
	go func() { pk.done <- cmd.Wait() }()
	pk.target = target{
		name: "portkey",
		url:  "http://127.0.0.1:" + strconv.Itoa(port) + "/v1/chat/completions",
		header: http.Header{
			"X-Portkey-Provider":    {"openai"},
			"X-Portkey-Custom-Host": {upURL},
			"Authorization":         {"Bearer sk-bench"},
		},
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-pk.done:
			return nil, fmt.Errorf("node exited (%v): %s", err, log.String())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1:"+strconv.Itoa(port)+"/", nil)
		res, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			res.Body.Close()
			return pk, nil
		}
		if time.Now().After(deadline) {
			pk.stop()
			return nil, fmt.Errorf("not answering after 20s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the node process and waits for it.
func (pk *portkeyGateway) stop() {
	pk.cmd.Process.Signal(os.Interrupt)
	select {
	case <-pk.done:
	case <-time.After(3 * time.Second):
		pk.cmd.Process.Kill()
		<-pk.done
	}
}
