// Command outage measures what an outage of the primary model costs the
// client of `loopctl serve` next to the Portkey gateway, in one run, as
// users run them: loopctl built from this repository and started as a
// separate process with a YAML config it writes (primary + healthy backup,
// trip_threshold 3, recovery_timeout 5s, max_retries 1, first_byte 3s; for
// hang and stall also hedge_after 500ms), Portkey (npm
// @portkey-ai/gateway, pinned in bench/portkey) on node with a fallback
// config primary -> backup and its own retry. Each gateway gets its own
// pair of scripted upstreams (in process, OpenAI chat-completions shape,
// streamed and not, on loopback).
//
// For each outage kind (500, hang, 429 + Retry-After 5, quota, overload,
// stall, Retry-After 120, and issue 28's partial outages: brownout,
// brownout-budget, slow, see partial.go) an open-loop client sends 20 req/s, one in four
// streaming, to both gateways at once; the primary is broken for -outage in
// the middle of the run, the backup is healthy all the time. It reports per
// gateway and kind: client p50/p99 in and outside the outage, client-visible
// failures, the requests that reached the sick primary, and the time from
// the fix until all traffic is served by the primary again; then "every
// model fails" probes (all 429, all 500, all hang: with hedge_after 500ms as
// for the hang row, and without): one request each, its time, status and
// Retry-After. It prints a Markdown table and a summary
// line, and checks loopctl's numbers against the goals of issue 17.
//
// Run it with bench/outage.sh (it builds loopctl and installs Portkey on
// demand); the default run takes about 14 minutes on 2 cores. It is a
// benchmark: plain `go test` runs only its tiny mode (outage_test.go).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/proc"
	"github.com/loopctl/loopctl-go/bench/internal/serve"
)

// options are the harness's settings (the flags).
type options struct {
	kinds         []kind
	targets       []string // "loopctl", "portkey"
	probes        []probeKind
	rate          int
	before        time.Duration
	outage        time.Duration
	after         time.Duration
	clientTimeout time.Duration
	probeTimeout  time.Duration
	hold          time.Duration // the longest an upstream holds a hung request
	maxInFlight   int
	loopctl       string // the loopctl binary ("" : build it from repo)
	repo          string
	race          bool // build loopctl with -race
	portkeyDir    string
	strict        bool    // a hedge_after loopctl rejects is an error
	rev4          string  // the rev 4 keys of the partial-outage runs: auto, on, off
	backoff       float64 // breaker.recovery_backoff of the brownout and slow runs (0: left out)
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "outage:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = run(ctx, o, os.Stdout)
	proc.StopAll() // every child, whatever happened
	if err != nil {
		fmt.Fprintln(os.Stderr, "outage:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("outage", flag.ContinueOnError)
	var o options
	kinds := fs.String("kinds", "500,hang,429,quota,overload,stall,long,brownout,brownout-budget,slow", "outage kinds, comma-separated: "+kindNames())
	targets := fs.String("targets", "loopctl,portkey", "gateways: loopctl, portkey")
	probes := fs.String("probes", "429,500,hang,hang-nohedge", `"every model fails" probes, comma-separated ("" : none)`)
	fs.IntVar(&o.rate, "rate", 20, "requests per second (open loop), one in four streaming")
	fs.DurationVar(&o.before, "before", 10*time.Second, "healthy traffic before the outage")
	fs.DurationVar(&o.outage, "outage", 30*time.Second, "how long the primary is broken")
	fs.DurationVar(&o.after, "after", 30*time.Second, "traffic after the fix")
	fs.DurationVar(&o.clientTimeout, "client-timeout", 20*time.Second, "the client's timeout per request (also sent as X-Stainless-Timeout)")
	fs.DurationVar(&o.probeTimeout, "probe-timeout", 120*time.Second, "the client's timeout for a probe request")
	fs.DurationVar(&o.hold, "hold", 60*time.Second, "the longest a broken upstream holds a hung request")
	fs.IntVar(&o.maxInFlight, "max-in-flight", 1000, "requests in flight per gateway before a tick is recorded as not sent")
	fs.StringVar(&o.loopctl, "loopctl", "", `the loopctl binary ("" : go build ./cmd/loopctl in -repo)`)
	fs.StringVar(&o.repo, "repo", "..", "the repository root (for building loopctl)")
	fs.BoolVar(&o.race, "race", false, "build loopctl with -race")
	fs.StringVar(&o.portkeyDir, "portkey", "portkey", "directory of the pinned Portkey install (with node_modules)")
	fs.BoolVar(&o.strict, "strict", false, "stop when loopctl rejects hedge_after (default: say so and run without it)")
	fs.StringVar(&o.rev4, "rev4", "auto", "the rev 4 keys (breaker.failure_rate, ..., retry.budget) of the brownout and slow runs: "+
		"auto (use them if this loopctl accepts them, else say so and run without), on (stop if rejected), off (run without: today's config)")
	fs.Float64Var(&o.backoff, "recovery-backoff", 2, "breaker.recovery_backoff of the brownout and slow runs (SEMANTICS §9.1; 0: left out, the same run without backoff)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.kinds, err = pick(*kinds, allKinds, func(k kind) string { return k.name }); err != nil {
		return o, fmt.Errorf("-kinds: %w", err)
	}
	if o.probes, err = pick(*probes, allProbes, func(p probeKind) string { return p.name }); err != nil {
		return o, fmt.Errorf("-probes: %w", err)
	}
	for _, t := range split(*targets) {
		if t != "loopctl" && t != "portkey" {
			return o, fmt.Errorf("-targets: unknown %q (loopctl, portkey)", t)
		}
		o.targets = append(o.targets, t)
	}
	switch {
	case len(o.targets) == 0:
		return o, fmt.Errorf("-targets: none")
	case o.rate < 1 || o.rate > 1000:
		return o, fmt.Errorf("-rate %d: want 1..1000", o.rate)
	case o.before < 0 || o.outage <= 0 || o.after <= 0:
		return o, fmt.Errorf("-before must be >= 0, -outage and -after > 0")
	case o.clientTimeout < time.Second || o.probeTimeout < time.Second:
		return o, fmt.Errorf("-client-timeout and -probe-timeout must be at least 1s")
	case o.rev4 != "auto" && o.rev4 != "on" && o.rev4 != "off":
		return o, fmt.Errorf("-rev4 %q: want auto, on or off", o.rev4)
	case o.backoff != 0 && !(o.backoff >= 1 && o.backoff < 1e6):
		return o, fmt.Errorf("-recovery-backoff %g: want 0 (off) or a factor of at least 1", o.backoff)
	case o.hold <= 0 || o.maxInFlight < 1:
		return o, fmt.Errorf("-hold must be > 0, -max-in-flight >= 1")
	}
	return o, nil
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// pick returns the entries of all named in the comma-separated list s, in
// the list's order.
func pick[T any](s string, all []T, name func(T) string) ([]T, error) {
	var out []T
	for _, n := range split(s) {
		i := slices.IndexFunc(all, func(t T) bool { return name(t) == n })
		if i < 0 {
			return nil, fmt.Errorf("unknown %q", n)
		}
		out = append(out, all[i])
	}
	return out, nil
}

// env is what one run shares across kinds.
type env struct {
	o          options
	loopctl    string // the binary
	dir        string // temporary files
	portkeyURL string // "" : Portkey is not measured
}

// report is everything a run measured.
type report struct {
	rows   []row
	probes []probeResult
	notes  []note
	took   time.Duration
}

// note is what a kind's run said about its config (marked † in the table).
type note struct{ kind, text string }

// run measures every kind and probe of o and prints the table to out.
func run(ctx context.Context, o options, out io.Writer) (*report, error) {
	start := time.Now()
	defer proc.StopAll()
	e, cleanup, err := setup(ctx, o, out)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	rep := &report{}
	for _, k := range o.kinds {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		fmt.Fprintf(os.Stderr, "outage: %s (%v + %v + %v)...\n", k.label, o.before, o.outage, o.after)
		rows, msg, err := runKind(ctx, e, k)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.name, err)
		}
		if msg != "" {
			rep.notes = append(rep.notes, note{kind: k.name, text: msg})
		}
		rep.rows = append(rep.rows, rows...)
	}
	for _, p := range o.probes {
		fmt.Fprintf(os.Stderr, "outage: probe %s...\n", p.label)
		rs, err := runProbe(ctx, e, p)
		if err != nil {
			return nil, fmt.Errorf("probe %s: %w", p.name, err)
		}
		rep.probes = append(rep.probes, rs...)
	}
	rep.took = time.Since(start)
	printReport(out, o, rep)
	return rep, nil
}

// setup builds loopctl (unless given) and starts Portkey (when asked; a
// Portkey that cannot start is skipped with a message).
func setup(ctx context.Context, o options, out io.Writer) (*env, func(), error) {
	dir, err := os.MkdirTemp("", "loopctl-outage-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	e := &env{o: o, dir: dir}
	if o.loopctl != "" {
		if e.loopctl, err = filepath.Abs(o.loopctl); err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	fmt.Fprintf(out, "outage benchmark: GOMAXPROCS=%d, %s/%s, %s\n", runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, serve.LoadAvg())
	if slices.Contains(o.targets, "loopctl") && e.loopctl == "" {
		if e.loopctl, err = serve.Build(ctx, o.repo, dir, o.race); err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	if slices.Contains(o.targets, "portkey") {
		c, base, err := proc.StartPortkey(ctx, o.portkeyDir)
		if err != nil {
			fmt.Fprintf(out, "portkey: skipped: %v\n", err)
		} else {
			e.portkeyURL = base + "/v1/chat/completions"
			cleanup = func() { c.Stop(); os.RemoveAll(dir) }
		}
	}
	return e, cleanup, nil
}
