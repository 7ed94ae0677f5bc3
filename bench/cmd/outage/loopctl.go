package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/proc"
	"github.com/loopctl/loopctl-go/bench/internal/serve"
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

// runConfig is what a run adds to the base config: hedge_after on the model
// (a GATEWAY.md rev 2 key) and SEMANTICS rev 4 §8 keys (issue 28) under the
// model's breaker and under retry, each "key: value".
type runConfig struct {
	hedge   bool
	breaker []string
	retry   []string
	backoff bool // breaker.recovery_backoff from -recovery-backoff (SEMANTICS §9.1; 0: left out)
}

// withBackoff is c with breaker.recovery_backoff f added when c takes it
// and f is not 0.
func (c runConfig) withBackoff(f float64) runConfig {
	if c.backoff && f != 0 {
		c.breaker = append(append([]string(nil), c.breaker...), "recovery_backoff: "+strconv.FormatFloat(f, 'g', -1, 64))
	}
	return c
}

// rev4 reports whether c has rev 4 keys.
func (c runConfig) rev4() bool { return len(c.breaker)+len(c.retry) > 0 }

// rev4Keys names c's rev 4 keys by their config paths (breaker.failure_rate).
func (c runConfig) rev4Keys() []string {
	var keys []string
	for _, kv := range c.breaker {
		k, _, _ := strings.Cut(kv, ":")
		keys = append(keys, "breaker."+k)
	}
	for _, kv := range c.retry {
		k, _, _ := strings.Cut(kv, ":")
		keys = append(keys, "retry."+k)
	}
	return keys
}

// describe lists c's rev 4 settings, "breaker.failure_rate 0.25, ...".
func (c runConfig) describe() string {
	var parts []string
	for i, kv := range append(append([]string(nil), c.breaker...), c.retry...) {
		_, v, _ := strings.Cut(kv, ":")
		parts = append(parts, c.rev4Keys()[i]+v)
	}
	return strings.Join(parts, ", ")
}

// loopctlConfig is the YAML config of `loopctl serve` for one run: one
// model "bench", primary p and backup b, the settings above, and what c
// adds.
func loopctlConfig(listen string, p pair, c runConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "listen: %s\n", listen)
	fmt.Fprintf(&b, "upstreams:\n  - name: primary\n    base_url: %s\n  - name: backup\n    base_url: %s\n", p.primary.baseURL(), p.backup.baseURL())
	fmt.Fprintf(&b, "models:\n  - name: bench\n    primary: primary/bench-model\n    chain: [backup/bench-model]\n")
	fmt.Fprintf(&b, "    breaker:\n      trip_threshold: %d\n      recovery_timeout: %v\n", tripThreshold, cooldown)
	for _, kv := range c.breaker {
		fmt.Fprintf(&b, "      %s\n", kv)
	}
	if c.hedge {
		fmt.Fprintf(&b, "    hedge_after: %v\n", hedgeAfter)
	}
	fmt.Fprintf(&b, "retry:\n  max_retries: %d\n", maxRetries)
	for _, kv := range c.retry {
		fmt.Fprintf(&b, "  %s\n", kv)
	}
	fmt.Fprintf(&b, "timeouts:\n  first_byte: %v\n", firstByte)
	return b.String()
}

// loopctlProc is a running `loopctl serve`.
type loopctlProc struct {
	target target
	child  *proc.Child
}

// rejected returns the first line of a config check's problems that names
// one of keys (the last part of each key path is matched), or "".
func rejected(problems string, keys []string) string {
	for _, line := range strings.Split(problems, "\n") {
		for _, k := range keys {
			if i := strings.LastIndexByte(k, '.'); strings.Contains(line, k[i+1:]) {
				return strings.TrimSpace(line)
			}
		}
	}
	return ""
}

// writeChecked writes the config for c into path and checks it.
func writeChecked(ctx context.Context, bin, path, listen string, p pair, c runConfig) (string, error) {
	if err := os.WriteFile(path, []byte(loopctlConfig(listen, p, c)), 0o600); err != nil {
		return "", err
	}
	return serve.Check(ctx, bin, path)
}

// settle writes and checks the config for c, dropping what this loopctl
// rejects: hedge_after (an error with strict), then the rev 4 keys (all of
// them: a partial window makes no sense; an error with rev4 "on"). It
// returns the config that passed, the notes on what was dropped, and the
// check's remaining problems.
func settle(ctx context.Context, bin, path, listen string, p pair, c runConfig, o options) (runConfig, []string, string, error) {
	var notes []string
	problems, err := writeChecked(ctx, bin, path, listen, p, c)
	for err == nil && problems != "" {
		var line, what string
		switch {
		case c.hedge && rejected(problems, []string{"hedge_after"}) != "":
			line, what, c.hedge = rejected(problems, []string{"hedge_after"}), "hedge_after", false
			if o.strict {
				return c, notes, problems, fmt.Errorf("this loopctl rejects hedge_after (%s); -strict is set", line)
			}
		case c.rev4() && rejected(problems, c.rev4Keys()) != "":
			line, what = rejected(problems, c.rev4Keys()), strings.Join(c.rev4Keys(), ", ")
			c.breaker, c.retry = nil, nil
			if o.rev4 == "on" {
				return c, notes, problems, fmt.Errorf("this loopctl rejects %s (%s); -rev4 on is set", what, line)
			}
		default:
			return c, notes, problems, nil
		}
		notes = append(notes, "this loopctl rejects "+what+" ("+line+"): run without")
		problems, err = writeChecked(ctx, bin, path, listen, p, c)
	}
	return c, notes, problems, err
}

// startLoopctl writes the config for pair p and run config c into dir,
// checks it and starts `loopctl serve` on a free loopback port. What this
// binary rejects of c is dropped (see settle) and said in note.
func startLoopctl(ctx context.Context, bin, dir string, p pair, c runConfig, o options) (lp *loopctlProc, note string, err error) {
	listen, err := proc.FreeAddr()
	if err != nil {
		return nil, "", err
	}
	path := filepath.Join(dir, "loopctl-"+strings.ReplaceAll(listen, ":", "-")+".yaml")
	c = c.withBackoff(o.backoff)
	if o.rev4 == "off" && c.rev4() {
		note = "run without " + strings.Join(c.rev4Keys(), ", ") + " (-rev4 off)"
		c.breaker, c.retry = nil, nil
	}
	c, notes, problems, err := settle(ctx, bin, path, listen, p, c, o)
	if note != "" {
		notes = append([]string{note}, notes...)
	}
	note = strings.Join(notes, "; ")
	if err != nil {
		return nil, note, err
	}
	if problems != "" {
		return nil, note, fmt.Errorf("loopctl serve --check rejects the config:\n%s\nconfig:\n%s", problems, loopctlConfig(listen, p, c))
	}
	ch, base, err := serve.Start(ctx, bin, path, listen)
	if err != nil {
		return nil, note, err
	}
	return &loopctlProc{target: target{name: "loopctl", url: base + "/v1/chat/completions"}, child: ch}, note, nil
}
