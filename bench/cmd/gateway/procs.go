package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/proc"
	"github.com/loopctl/loopctl-go/bench/internal/serve"
)

// child is a target served by a process of its own, at addr.
type child struct {
	*proc.Child
	addr string
}

// pinned returns argv run under taskset on cpus when cpus is set and
// taskset is installed, so that every target shares the same cores.
func pinned(cpus string, argv ...string) *exec.Cmd {
	if ts, err := exec.LookPath("taskset"); err == nil && cpus != "" {
		argv = append([]string{ts, "-c", cpus}, argv...)
	}
	return exec.Command(argv[0], argv[1:]...)
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
	c, err := proc.Start(cmd)
	if err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		c.Stop()
		return nil, fmt.Errorf("%s: no address (%q, %v)", args[0], line, err)
	}
	return &child{Child: c, addr: addr}, nil
}

// startLoopctl builds nothing: it runs the loopctl binary bin with a config
// file in dir routing model "bench" to upURL (and "bench-messages" to the
// same upstream as an Anthropic one), and model "bench-pool" to a pool of
// three members on that upstream (upstreams up, up-b and up-c) when this
// loopctl accepts pools (pooled says so), on a free loopback port, its
// request log to the null device (not measured, and not copied by the
// harness), and waits at most 20s until it answers /readyz.
func startLoopctl(cpus, bin, dir, upURL string) (c *child, pooled bool, err error) {
	addr, err := proc.FreeAddr()
	if err != nil {
		return nil, false, err
	}
	cfg := filepath.Join(dir, "loopctl-bench.yaml")
	if pooled, err = writeLoopctlConfig(bin, cfg, upURL); err != nil {
		return nil, false, err
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, false, err
	}
	defer null.Close() // the child has its own descriptor once started
	cmd := pinned(cpus, bin, "serve", "--config", cfg, "--listen", addr)
	cmd.Stdout, cmd.Stderr = null, null
	ch, err := proc.Start(cmd)
	if err != nil {
		return nil, false, err
	}
	if err := proc.WaitReady(context.Background(), "http://"+addr+"/readyz", ch, 20*time.Second); err != nil {
		ch.Stop()
		return nil, false, fmt.Errorf("loopctl serve on %s: %v", addr, err)
	}
	return &child{Child: ch, addr: addr}, pooled, nil
}

// writeLoopctlConfig writes loopctl's config to path: with the pool model
// when `loopctl serve --check` accepts it (pooled), else without it, said
// so.
func writeLoopctlConfig(bin, path, upURL string) (pooled bool, err error) {
	base := "upstreams:\n  - name: up\n    base_url: " + upURL + "\n  - name: an\n    api: anthropic\n    base_url: " + strings.TrimSuffix(upURL, "/v1") + "\n"
	models := "models:\n  - name: bench\n    primary: up/bench-model\n  - name: bench-messages\n    primary: an/bench-model\n"
	pool := "  - name: up-b\n    base_url: " + upURL + "\n  - name: up-c\n    base_url: " + upURL + "\n" +
		"pools:\n  - name: p\n    members: [up/bench-model, up-b/bench-model, up-c/bench-model]\n"
	if err := os.WriteFile(path, []byte(base+pool+models+"  - name: bench-pool\n    primary: pool/p\n"), 0o644); err != nil {
		return false, err
	}
	problems, err := serve.Check(context.Background(), bin, path)
	if err != nil || problems == "" {
		return err == nil, err
	}
	fmt.Printf("loopctl-pool: skipped: this loopctl rejects the pool config:\n%s\n", problems)
	return false, os.WriteFile(path, []byte(base+models), 0o644)
}
