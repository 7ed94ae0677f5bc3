package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// child is a target served by a process of its own.
type child struct {
	cmd  *exec.Cmd
	addr string
}

// pinned returns argv run under taskset on cpus when cpus is set and
// taskset is installed, so that every target shares the same cores.
func pinned(cpus string, argv ...string) *exec.Cmd {
	if ts, err := exec.LookPath("taskset"); err == nil && cpus != "" {
		argv = append([]string{ts, "-c", cpus}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // killed when we end, even on a crash
	return cmd
}

// running is every child started, stopped by fail as well as at the end.
var running []*child

func stopAll() {
	for _, c := range running {
		c.stop()
	}
	running = nil
}

// startRole runs this binary in role args (see runRole) and reads its address.
func startRole(cpus string, args ...string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := pinned(cpus, append([]string{self}, args...)...)
	if _, err := cmd.StdinPipe(); err != nil { // closed when we exit: the child ends
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("%s: no address (%q, %v)", args[0], line, err)
	}
	c := &child{cmd: cmd, addr: addr}
	running = append(running, c)
	return c, nil
}

// startLoopctl builds nothing: it runs the loopctl binary bin with a config
// file routing model "bench" to upURL, on a free loopback port, and waits
// (at most 20s) until it answers /readyz.
func startLoopctl(cpus, bin, dir, upURL string) (*child, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := filepath.Join(dir, "loopctl-bench.yaml")
	yaml := "upstreams:\n  - name: up\n    base_url: " + upURL + "\n  - name: an\n    api: anthropic\n    base_url: " + strings.TrimSuffix(upURL, "/v1") +
		"\nmodels:\n  - name: bench\n    primary: up/bench-model\n  - name: bench-messages\n    primary: an/bench-model\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		return nil, err
	}
	cmd := pinned(cpus, bin, "serve", "--config", cfg, "--listen", addr)
	cmd.Stdout, cmd.Stderr = nil, nil // the request log is not measured
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, addr: addr}
	running = append(running, c)
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/readyz", nil)
		res, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			res.Body.Close()
			return c, nil
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, errors.New("loopctl serve not answering after 20s on " + addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop kills the child and waits for it.
func (c *child) stop() {
	if c == nil || c.cmd.Process == nil {
		return
	}
	c.cmd.Process.Kill()
	c.cmd.Wait()
}

// pid is the child's process id, for the log.
func (c *child) pid() string { return strconv.Itoa(c.cmd.Process.Pid) }
