package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/proc"
	"github.com/loopctl/loopctl-go/bench/internal/serve"
)

// The loopctl settings of issue 38's runs (GATEWAY.md §11.1).
const (
	tripThreshold   = 3
	recoveryTimeout = 5 * time.Second
	recoveryBackoff = 2
	firstByte       = 3 * time.Second
	hedgeAfter      = 500 * time.Millisecond // slow and hang
)

// Pool modes (-pools): how loopctl's model is built.
const (
	poolsAuto = "auto" // a pool if this loopctl accepts pools:, else one entry (said so; no goal is judged)
	poolsOn   = "on"   // a pool, or stop
	poolsOff  = "off"  // one entry, m1/x: the harness's own check, no goal is judged
)

// loopctlConfig is the YAML config of `loopctl serve` for a run: the three
// members as upstreams m1..m3 (each with its own key, in a file of dir that
// writeKeys writes), and model "bench" whose primary is pool/p over them
// (or, with pool false, m1/x alone).
func loopctlConfig(listen, dir string, t trio, sc scenario, pool bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %s\nupstreams:\n", listen)
	for _, m := range t {
		fmt.Fprintf(&b, "  - name: %s\n    base_url: %s\n    api_key_file: %s\n", m.name, m.baseURL(), keyFile(dir, m))
		if m.w == messages {
			b.WriteString("    api: anthropic\n")
		}
	}
	brk := fmt.Sprintf("{trip_threshold: %d, recovery_timeout: %v, recovery_backoff: %d}", tripThreshold, recoveryTimeout, recoveryBackoff)
	primary := t[0].target()
	if pool {
		fmt.Fprintf(&b, "pools:\n  - name: p\n    members: [%s, %s, %s]\n    breaker: %s\n", t[0].target(), t[1].target(), t[2].target(), brk)
		primary = "pool/p"
	}
	fmt.Fprintf(&b, "models:\n  - name: bench\n    primary: %s\n", primary)
	if !pool {
		fmt.Fprintf(&b, "    breaker: %s\n", brk)
	}
	if sc.hedge {
		fmt.Fprintf(&b, "    hedge_after: %v\n", hedgeAfter)
	}
	fmt.Fprintf(&b, "timeouts:\n  first_byte: %v\n", firstByte)
	return b.String()
}

// keyFile is the file of dir holding member m's key.
func keyFile(dir string, m *member) string { return filepath.Join(dir, "key-"+m.name) }

// writeKeys writes every member's key into its file in dir.
func writeKeys(dir string, t trio) error {
	for _, m := range t {
		if err := os.WriteFile(keyFile(dir, m), []byte(m.key+"\n"), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// startLoopctl writes and checks the config for trio t and starts `loopctl
// serve` on a free loopback port. In mode auto a loopctl that rejects the
// pool config runs the one-entry model instead; note says so (and why),
// and pool reports which ran.
func startLoopctl(ctx context.Context, bin, dir string, t trio, sc scenario, mode string) (ch *proc.Child, tg target, pool bool, note string, err error) {
	listen, err := proc.FreeAddr()
	if err != nil {
		return nil, target{}, false, "", err
	}
	path := filepath.Join(dir, "loopctl-"+sc.name+".yaml")
	if err := writeKeys(dir, t); err != nil {
		return nil, target{}, false, "", err
	}
	pool = mode != poolsOff
	problems, err := writeChecked(ctx, bin, path, loopctlConfig(listen, dir, t, sc, pool))
	if err == nil && problems != "" && pool && mode == poolsAuto {
		note = "this loopctl rejects the pool config (" + firstProblem(problems) + "): run on the one-entry model m1/x; no goal judged"
		pool = false
		problems, err = writeChecked(ctx, bin, path, loopctlConfig(listen, dir, t, sc, pool))
	}
	if mode == poolsOff {
		note = "one-entry model m1/x (-pools off); no goal judged"
	}
	if err != nil {
		return nil, target{}, pool, note, err
	}
	if problems != "" {
		return nil, target{}, pool, note, fmt.Errorf("loopctl serve --check rejects the config:\n%s\nconfig:\n%s", problems, loopctlConfig(listen, dir, t, sc, pool))
	}
	ch, base, err := serve.Start(ctx, bin, path, listen)
	if err != nil {
		return nil, target{}, pool, note, err
	}
	return ch, target{name: "loopctl", base: base}, pool, note, nil
}

// writeChecked writes cfg to path and checks it with `loopctl serve --check`.
func writeChecked(ctx context.Context, bin, path, cfg string) (string, error) {
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return "", err
	}
	return serve.Check(ctx, bin, path)
}

// linePos is a config check's position of a problem (" (line 12)"): it
// differs between the runs' configs, the problem does not.
var linePos = regexp.MustCompile(` \(line [0-9]+\)`)

// firstProblem is the first problem a config check lists: its first
// indented line (the first line names the file), or its first line.
func firstProblem(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			return linePos.ReplaceAllString(strings.TrimSpace(l), "")
		}
	}
	return lines[0]
}
