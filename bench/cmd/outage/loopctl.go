package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/proc"
)

// The loopctl settings of the table (SEMANTICS §3, §4, §7;
// GATEWAY.md rev 2 §2).
const (
	tripThreshold = 3
	cooldown      = 5 * time.Second // breaker.recovery_timeout
	maxRetries    = 1
	firstByte     = 3 * time.Second
	hedgeAfter    = 500 * time.Millisecond // hang and stall only
)

// loopctlConfig is the YAML config of `loopctl serve` for one run: one
// model "bench", primary p and backup b, the settings above, and, when
// hedge is set, hedge_after on the model (a GATEWAY.md rev 2 key).
func loopctlConfig(listen string, p pair, hedge bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %s\n", listen)
	fmt.Fprintf(&b, "upstreams:\n  - name: primary\n    base_url: %s\n  - name: backup\n    base_url: %s\n", p.primary.baseURL(), p.backup.baseURL())
	fmt.Fprintf(&b, "models:\n  - name: bench\n    primary: primary/bench-model\n    chain: [backup/bench-model]\n")
	fmt.Fprintf(&b, "    breaker:\n      trip_threshold: %d\n      recovery_timeout: %v\n", tripThreshold, cooldown)
	if hedge {
		fmt.Fprintf(&b, "    hedge_after: %v\n", hedgeAfter)
	}
	fmt.Fprintf(&b, "retry:\n  max_retries: %d\ntimeouts:\n  first_byte: %v\n", maxRetries, firstByte)
	return b.String()
}

// loopctlProc is a running `loopctl serve`.
type loopctlProc struct {
	target target
	child  *proc.Child
}

// checkConfig runs `loopctl serve --check` on a config file and returns
// its problems ("" when it says OK).
func checkConfig(ctx context.Context, bin, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "serve", "--check", "--config", path).CombinedOutput()
	if err == nil {
		return "", nil
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
		return strings.TrimSpace(string(out)), nil
	}
	return "", fmt.Errorf("loopctl serve --check: %v: %s", err, out)
}

// rejectedKey reports the rev-2 key a config check rejected ("" if the
// problems are about something else).
func rejectedKey(problems string) string {
	for _, line := range strings.Split(problems, "\n") {
		if strings.Contains(line, "hedge_after") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// startLoopctl writes the config for pair p into dir, checks it and starts
// `loopctl serve` on a free loopback port. With hedge, a binary that
// rejects hedge_after is reported in note and run without it, unless
// strict, which makes that an error.
func startLoopctl(ctx context.Context, bin, dir string, p pair, hedge, strict bool) (lp *loopctlProc, note string, err error) {
	listen, err := proc.FreeAddr()
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, "loopctl-"+strings.ReplaceAll(listen, ":", "-")+".yaml")
	if err := os.WriteFile(path, []byte(loopctlConfig(listen, p, hedge)), 0o600); err != nil {
		return nil, "", err
	}
	problems, err := checkConfig(ctx, bin, path)
	if err != nil {
		return nil, "", err
	}
	if problems != "" && hedge && rejectedKey(problems) != "" {
		note = "this loopctl rejects hedge_after (" + rejectedKey(problems) + ")"
		if strict {
			return nil, note, fmt.Errorf("%s; -strict is set", note)
		}
		note += ": run without it"
		if err := os.WriteFile(path, []byte(loopctlConfig(listen, p, false)), 0o600); err != nil {
			return nil, note, err
		}
		if problems, err = checkConfig(ctx, bin, path); err != nil {
			return nil, note, err
		}
	}
	if problems != "" {
		return nil, note, fmt.Errorf("loopctl serve --check rejects the config:\n%s\nconfig:\n%s", problems, loopctlConfig(listen, p, hedge))
	}
	c, err := proc.Start(exec.Command(bin, "serve", "--config", path, "--grace", "1s"))
	if err != nil {
		return nil, note, err
	}
	base := "http://" + listen
	if err := proc.WaitReady(ctx, base+"/readyz", c, 15*time.Second); err != nil {
		c.Stop()
		return nil, note, fmt.Errorf("loopctl serve: %v; its log ends:\n%s", err, proc.Tail(c.Log.String(), 1500))
	}
	return &loopctlProc{target: target{name: "loopctl", url: base + "/v1/chat/completions"}, child: c}, note, nil
}

// buildLoopctl builds ./cmd/loopctl of the repository at repo into dir and
// returns the binary's path.
func buildLoopctl(ctx context.Context, repo, dir string, race bool) (string, error) {
	bin := filepath.Join(dir, "loopctl")
	args := []string{"build", "-o", bin}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.CommandContext(ctx, "go", append(args, "./cmd/loopctl")...)
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/loopctl in %s: %v\n%s", repo, err, out)
	}
	return bin, nil
}
