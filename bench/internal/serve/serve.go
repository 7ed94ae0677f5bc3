// Package serve runs `loopctl serve` for the benchmarks as users run it: a
// binary built from this repository, a YAML config file checked with
// `serve --check` first, and a process of its own (a proc.Child) on a
// loopback port. It also holds the figures every harness prints the same
// way: the machine's load average, latency quantiles and short transport errors.
package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/proc"
)

// Build builds ./cmd/loopctl of the repository at repo into dir (with the
// race detector when race is set) and returns the binary's path.
func Build(ctx context.Context, repo, dir string, race bool) (string, error) {
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

// Check runs `loopctl serve --check` on the config file at path and
// returns its problems ("" when it says OK). A check that cannot run, or
// fails otherwise than by rejecting the config (exit status 2), is an error.
func Check(ctx context.Context, bin, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "serve", "--check", "--config", path).CombinedOutput()
	if err == nil {
		return "", nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 2 {
		return strings.TrimSpace(string(out)), nil
	}
	return "", fmt.Errorf("loopctl serve --check: %v: %s", err, out)
}

// Start starts `loopctl serve` with the config file at path, which must
// listen on listen, and waits at most 15s until it answers /readyz. It
// returns the Child and the gateway's base URL (http://listen).
func Start(ctx context.Context, bin, path, listen string) (*proc.Child, string, error) {
	ch, err := proc.Start(exec.Command(bin, "serve", "--config", path, "--grace", "1s"))
	if err != nil {
		return nil, "", err
	}
	base := "http://" + listen
	if err := proc.WaitReady(ctx, base+"/readyz", ch, 15*time.Second); err != nil {
		ch.Stop()
		return nil, "", fmt.Errorf("loopctl serve: %v; its log ends:\n%s", err, proc.Tail(ch.Log.String(), 1500))
	}
	return ch, base, nil
}

// LoadAvg returns the machine's 1-minute load average, for context:
// "load average 1.52 (1 min)".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return "load average " + f[0] + " (1 min)"
	}
	return "load average unknown"
}

// Quantile returns the q-quantile of ds (sorted in place; 0 when ds is
// empty), the nearest rank.
func Quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[int(q*float64(len(ds)-1)+0.5)]
}

// ShortErr names a transport error briefly, for a benchmark's report: a
// client timeout as "client timeout", a refused or dropped connection as
// such, anything else cut at 80 bytes.
func ShortErr(err error) string {
	s := err.Error()
	switch {
	case strings.Contains(s, "Client.Timeout") || strings.Contains(s, "deadline exceeded"):
		return "client timeout"
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "EOF") || strings.Contains(s, "connection reset"):
		return "connection dropped"
	}
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}
