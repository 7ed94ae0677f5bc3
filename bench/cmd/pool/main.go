// Command pool measures loopctl's pools (GATEWAY.md §11, SEMANTICS §9.3)
// next to the Portkey gateway's loadbalance mode, in one run, as users run
// them: loopctl built from this repository and started as a separate
// process with a YAML config it writes, Portkey (npm @portkey-ai/gateway,
// pinned in bench/portkey) on node. Each gateway gets its own scripted
// upstream of three members of one model (llmtest handlers, each on its own
// loopback listener with its own key): loopctl as upstreams m1..m3 in
// `pools: [{name: p, members: [m1/x, m2/x, m3/x], breaker:
// {trip_threshold: 3, recovery_timeout: 5s, recovery_backoff: 2}}]` with
// model "bench" on pool/p and timeouts.first_byte 3s (hedge_after 500ms
// for the slow and hang runs); Portkey in loadbalance mode over the same
// three, equal weights, each target with its key, retry attempts 3 and
// request_timeout 3s.
//
// For each scenario an open-loop client sends 20 req/s for 60 s to both
// gateways at once, one in four streaming, each request with one of 50
// session keys (x-loopctl-session; on the Messages wire also
// metadata.user_id); member 3 is sick from 10 s to 40 s: down (500), a
// brownout (3 in 10 fail, never two in a row), slow (first content after
// 2 s), a rate limit of 3 req/s its headers announce (x-ratelimit-*; and
// on the Messages wire anthropic-ratelimit-*), a hang with hedging, a hang
// without hedging while every member's streams take 4 s; and all healthy.
// The members log every request (the client request's id, its key, what
// they answered); the client logs what it saw (time to first content, the
// member that served it). It prints one line per goal of issue 38 ("Prove
// it"): loopctl's figure, the goal, PASS or FAIL, and Portkey's figure.
// A session's home for the goals is SEMANTICS §9.3 rule 3(b)'s, computed
// with package pool's Hash and Score over the member names loopctl uses.
//
// Run it with bench/pool.sh (it builds loopctl and installs Portkey on
// demand); the default run takes about 9 minutes on 2 cores. It is a
// benchmark: plain `go test` runs only its tiny mode (pool_test.go).
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
	scenarios     []scenario
	targets       []string // "loopctl", "portkey"
	rate          int
	duration      time.Duration
	sickFrom      time.Duration
	sickTo        time.Duration
	clientTimeout time.Duration
	maxInFlight   int
	loopctl       string // the loopctl binary ("" : build it from repo)
	repo          string
	race          bool
	portkeyDir    string
	pools         string // poolsAuto, poolsOn, poolsOff
	dump          string // a directory for every request as JSON lines ("": none)
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "pool:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, err = run(ctx, o, os.Stdout)
	proc.StopAll() // every child, whatever happened
	if err != nil {
		fmt.Fprintln(os.Stderr, "pool:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("pool", flag.ContinueOnError)
	var o options
	names := fs.String("scenarios", "down,brownout,slow,ratelimit,ratelimit-messages,hang,hang-4s,healthy", "scenarios, comma-separated: "+scenarioNames())
	targets := fs.String("targets", "loopctl,portkey", "gateways: loopctl, portkey")
	fs.IntVar(&o.rate, "rate", 20, "requests per second (open loop), one in four streaming")
	fs.DurationVar(&o.duration, "duration", 60*time.Second, "each scenario's load")
	fs.DurationVar(&o.sickFrom, "sick-from", 10*time.Second, "when m3 falls sick, from the load's start")
	fs.DurationVar(&o.sickTo, "sick-to", 40*time.Second, "when m3 is well again, from the load's start")
	fs.DurationVar(&o.clientTimeout, "client-timeout", 20*time.Second, "the client's timeout per request (also sent as X-Stainless-Timeout)")
	fs.IntVar(&o.maxInFlight, "max-in-flight", 1000, "requests in flight per gateway before a tick is recorded as not sent")
	fs.StringVar(&o.loopctl, "loopctl", "", `the loopctl binary ("" : go build ./cmd/loopctl in -repo)`)
	fs.StringVar(&o.repo, "repo", "..", "the repository root (for building loopctl)")
	fs.BoolVar(&o.race, "race", false, "build loopctl with -race")
	fs.StringVar(&o.portkeyDir, "portkey", "portkey", "directory of the pinned Portkey install (with node_modules)")
	fs.StringVar(&o.pools, "pools", poolsAuto, "loopctl's model: auto (pool/p if this loopctl accepts pools:, else the one-entry model m1/x, no goal judged), on (pool/p or stop), off (m1/x)")
	fs.StringVar(&o.dump, "dump", "", `a directory to write every client request and member arrival into, as JSON lines ("" : none)`)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, n := range split(*names) {
		i := slices.IndexFunc(allScenarios, func(s scenario) bool { return s.name == n })
		if i < 0 {
			return o, fmt.Errorf("-scenarios: unknown %q (%s)", n, scenarioNames())
		}
		o.scenarios = append(o.scenarios, allScenarios[i])
	}
	for _, t := range split(*targets) {
		if t != "loopctl" && t != "portkey" {
			return o, fmt.Errorf("-targets: unknown %q (loopctl, portkey)", t)
		}
		o.targets = append(o.targets, t)
	}
	switch {
	case len(o.scenarios) == 0 || len(o.targets) == 0:
		return o, fmt.Errorf("-scenarios and -targets: none")
	case o.rate < 1 || o.rate > 1000:
		return o, fmt.Errorf("-rate %d: want 1..1000", o.rate)
	case !(0 <= o.sickFrom && o.sickFrom < o.sickTo && o.sickTo < o.duration):
		return o, fmt.Errorf("-sick-from %v, -sick-to %v, -duration %v: want 0 ≤ from < to < duration", o.sickFrom, o.sickTo, o.duration)
	case o.clientTimeout < time.Second || o.maxInFlight < 1:
		return o, fmt.Errorf("-client-timeout must be at least 1s, -max-in-flight at least 1")
	case o.pools != poolsAuto && o.pools != poolsOn && o.pools != poolsOff:
		return o, fmt.Errorf("-pools %q: want auto, on or off", o.pools)
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

// env is what one run shares across scenarios.
type env struct {
	o           options
	loopctl     string // the binary
	dir         string // temporary files
	portkeyBase string // "" : Portkey is not measured
}

// run measures every scenario of o and prints the goals to out.
func run(ctx context.Context, o options, out io.Writer) ([]result, error) {
	start := time.Now()
	defer proc.StopAll()
	e, cleanup, err := setup(ctx, o, out)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	var all []result
	for _, sc := range o.scenarios {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		fmt.Fprintf(os.Stderr, "pool: %s (%v, m3 sick %v..%v)...\n", sc.label, o.duration, o.sickFrom, o.sickTo)
		rs, err := runScenario(ctx, e, sc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.name, err)
		}
		for i := range rs {
			if o.dump == "" {
				break
			}
			if err := dump(o.dump, &rs[i]); err != nil {
				return nil, fmt.Errorf("-dump: %w", err)
			}
		}
		all = append(all, rs...)
	}
	printReport(out, o, all, time.Since(start))
	return all, nil
}

// setup builds loopctl (unless given) and starts Portkey (when asked; a
// Portkey that cannot start is skipped with a message).
func setup(ctx context.Context, o options, out io.Writer) (*env, func(), error) {
	dir, err := os.MkdirTemp("", "loopctl-pool-")
	if err != nil {
		return nil, nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	e := &env{o: o, dir: dir}
	fmt.Fprintf(out, "pool benchmark: %s, GOMAXPROCS=%d, %s/%s, %s\n", time.Now().UTC().Format(time.RFC3339), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, serve.LoadAvg())
	if slices.Contains(o.targets, "loopctl") {
		if o.loopctl != "" {
			e.loopctl, err = filepath.Abs(o.loopctl)
		} else {
			e.loopctl, err = serve.Build(ctx, o.repo, dir, o.race)
		}
		if err != nil {
			cleanup()
			return nil, nil, err
		}
	}
	if slices.Contains(o.targets, "portkey") {
		c, base, err := proc.StartPortkey(ctx, o.portkeyDir)
		if err != nil {
			fmt.Fprintf(out, "portkey: skipped: %v\n", err)
		} else {
			e.portkeyBase = base
			cleanup = func() { c.Stop(); os.RemoveAll(dir) }
		}
	}
	return e, cleanup, nil
}
