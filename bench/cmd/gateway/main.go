// Command gateway measures what loopctl's gateway adds to a request, next to
// the floor for a Go proxy and a peer gateway, in one run against the same
// scripted upstream on loopback:
//
//	(a) direct: the upstream itself (this command's "upstream" role, a
//	    process of its own);
//	(b) proxy: a minimal httputil.ReverseProxy (the "proxy" role, a process
//	    of its own);
//	(c) loopctl: `loopctl serve` (-loopctl: the binary, which gateway.sh
//	    builds from the repository root) with a config file it writes;
//	(d) portkey: the Portkey gateway (npm @portkey-ai/gateway, pinned in
//	    bench/portkey), started with node; skipped with a message when node
//	    or its npm install is missing.
//
// It reports, non-streaming and streaming (time to first byte):
//
//   - the median latency each target adds over direct, from sequential
//     requests in interleaved rounds (every round visits every target, in a
//     rotating order, so noise from the rest of the machine hits all alike);
//   - the throughput each target sustains with p99 under a fixed bound,
//     found by a search over request rates driven by vegeta (as a Go
//     library) on the same machine;
//   - the allocations of the gateway's breaker part (model breaker gate and
//     verdict) per request;
//   - translated requests (GATEWAY.md §8.9, translated.go): a
//     Claude-Code-sized Messages request (about 100 KB) to a model whose
//     only entry is an openai upstream, translated to chat and its answer
//     back, next to the same request passed through to an anthropic
//     upstream on the same scripted process (goal: at most 1.5× the added
//     median), and a translated Messages stream's time to first content next
//     to the same-wire stream's (goal: at most 1.2×);
//   - pools (GATEWAY.md §11): the median loopctl adds with a model whose
//     primary is a pool of three members (three upstreams on the same
//     scripted process) next to the one-entry model, in the same
//     interleaved rounds of the same process (goal: at most 1.05×); skipped
//     with a message when the loopctl binary does not accept pools:.
//
// Run it from bench/ (go run ./cmd/gateway, or ./gateway.sh); it takes
// under two minutes with the default flags. It is a benchmark, not a test:
// plain `go test` never runs it.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/loopctl/loopctl-go/bench/internal/proc"
	"github.com/loopctl/loopctl-go/bench/internal/serve"
	"github.com/loopctl/loopctl-go/gateway"
)

// target is one way to reach the upstream.
type target struct {
	name   string
	url    string // chat completions endpoint
	header http.Header
	model  string // the model requests name; "": bench
}

// body is the chat request t sends, streamed or not.
func (t target) body(stream bool) []byte {
	b := plainBody
	if stream {
		b = streamBody
	}
	if t.model != "" {
		b = bytes.Replace(b, []byte(`"model":"bench"`), []byte(`"model":"`+t.model+`"`), 1)
	}
	return b
}

// flags are the command's flags.
type flags struct {
	rounds, perRound, maxRate int
	p99, step                 time.Duration
	cpus, loopctl, root       string
	portkey                   string
}

// parseFlags parses the command line.
func parseFlags() flags {
	var (
		rounds   = flag.Int("rounds", 12, "interleaved latency rounds")
		perRound = flag.Int("n", 100, "sequential requests per target per round")
		p99      = flag.Duration("p99", 10*time.Millisecond, "the p99 bound of the throughput search")
		step     = flag.Duration("step", 400*time.Millisecond, "duration of each vegeta attack in the throughput search")
		maxRate  = flag.Int("max-rate", 20000, "highest request rate tried (req/s)")
		cpus     = flag.String("cpus", "0,1", "cores every target process is pinned to (taskset -c); \"\": not pinned")
		loopctl  = flag.String("loopctl", "", "the loopctl binary run as `loopctl serve` (gateway.sh builds it); \"\": skip")
		root     = flag.String("root", "..", "the repository root (for go test -bench BenchmarkHandler ./gateway/)")
		portkey  = flag.String("portkey", "portkey", "directory of the pinned Portkey install (with node_modules); \"\": skip (d)")
	)
	flag.Parse()
	return flags{rounds: *rounds, perRound: *perRound, maxRate: *maxRate, p99: *p99, step: *step,
		cpus: *cpus, loopctl: *loopctl, root: *root, portkey: *portkey}
}

func main() {
	if runRole(os.Args[1:]) {
		return
	}
	fl := parseFlags()
	start := time.Now()
	fmt.Printf("gateway benchmark: GOMAXPROCS=%d, %s/%s, %s\n", runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, serve.LoadAvg())

	defer proc.StopAll() // every child: the roles, loopctl and Portkey
	targets, pool, upURL, dir := startTargets(fl)
	if dir != "" {
		defer os.RemoveAll(dir)
	}
	gw, err := gateway.New(gateway.Config{ // in process: for the allocation counts only
		Upstreams: []gateway.Upstream{{Name: "up", BaseURL: upURL}},
		Models:    []gateway.Model{{Name: "bench", Primary: "up/bench-model"}},
	}, gateway.Options{})
	if err != nil {
		fail(err)
	}
	defer gw.Close()

	var pk *portkeyGateway
	if fl.portkey != "" {
		if pk, err = startPortkey(fl.portkey, upURL); err != nil {
			fmt.Printf("portkey: skipped: %v\n", err)
		} else {
			targets = append(targets, pk.target)
		}
	}
	targets, pk = checkTargets(targets, pk)
	sum := measureLatency(targets, fl)
	poolRatio := measurePool(targets, pool, fl)
	wires := measureWires(targets, fl.rounds, fl.perRound/2)
	translated := measureTranslated(targets, fl.rounds, fl.perRound/2)
	rate := measureThroughput(targets, fl)
	a := reportAllocs(gw, fl.root)
	fmt.Printf("\ntotal time %v\n", time.Since(start).Round(time.Second))
	ratio := 0.0
	if sum[0][1] > 0 {
		ratio = float64(sum[0][0]) / float64(sum[0][1])
	}
	fmt.Printf("other wires: streaming time to first content added, loopctl: responses %d µs, messages %d µs\n",
		wires["responses"].Microseconds(), wires["messages"].Microseconds())
	printTranslatedSummary(translated)
	fmt.Printf("gateway: added median %d µs (%.2f× ReverseProxy), p99 %d µs, streaming TTFB added %d µs, %d req/s at p99 ≤ %s, %.0f allocs/request\n",
		sum[0][0].Microseconds(), ratio, sum[0][2].Microseconds(), sum[1][0].Microseconds(), rate, spaced(fl.p99), a)
	if poolRatio > 0 {
		fmt.Printf("pool: added median with a 3-member pool %.2f× the one-entry model's (goal ≤ 1.05×)\n", poolRatio)
	}
}

// startTargets starts the upstream (direct), the reverse proxy and, with
// -loopctl, loopctl serve (with its config in dir, a new temporary directory
// the caller removes; "" without -loopctl), and returns them as targets with
// the upstream's API root, and loopctl's pool model as a target of its own
// (name "", when there is none: no -loopctl, or a loopctl without pools).
// It fails the command when one does not start.
func startTargets(fl flags) (targets []target, pool target, upURL, dir string) {
	start1 := func(c *child, err error) *child {
		if err != nil {
			fail(err)
		}
		return c
	}
	up := start1(startRole(fl.cpus, "upstream"))
	upURL = "http://" + up.addr + "/v1"
	targets = []target{{name: "direct", url: upURL + "/chat/completions"}}
	px := start1(startRole(fl.cpus, "proxy", "http://"+up.addr))
	targets = append(targets, target{name: "proxy", url: "http://" + px.addr + "/v1/chat/completions"})
	if fl.loopctl != "" {
		dir, _ = os.MkdirTemp("", "gateway-bench")
		gs, pooled, err := startLoopctl(fl.cpus, fl.loopctl, dir, upURL)
		if err != nil {
			fail(err)
		}
		targets = append(targets, target{name: "loopctl", url: "http://" + gs.addr + "/v1/chat/completions"})
		if pooled {
			pool = target{name: "loopctl-pool", url: "http://" + gs.addr + "/v1/chat/completions", model: "bench-pool"}
		}
	}
	fmt.Printf("processes: upstream %s, proxy %s (pinned to cpus %q)\n", up.Pid(), px.Pid(), fl.cpus)
	return targets, pool, upURL, dir
}

// checkTargets has every target answer both kinds (non-streaming and
// streaming) correctly before it is timed. Portkey (pk, last of targets) is
// stopped and dropped, with its log, if it does not; any other target fails
// the command. It returns the targets left and pk (nil once dropped).
func checkTargets(targets []target, pk *portkeyGateway) ([]target, *portkeyGateway) {
	for i := 0; i < len(targets); i++ {
		t := targets[i]
		for _, stream := range []bool{false, true} {
			if err := checkOnce(t, stream); err != nil {
				if pk == nil || t.name != "portkey" {
					fail(fmt.Errorf("%s (stream %v): %w", t.name, stream, err))
				}
				fmt.Printf("portkey: skipped: a check request (stream %v) failed: %v\nits log ends:\n%s\n", stream, err, proc.Tail(pk.Log.String(), 1500))
				pk.Stop()
				pk = nil
				targets = targets[:i]
				break
			}
		}
	}
	return targets, pk
}

// checkOnce sends one request of a kind to t, up to three times: the floor,
// httputil.ReverseProxy, cuts about one stream in a thousand ("use of
// closed network connection" on its upstream read), which the latency
// rounds count as failed requests rather than stopping the run.
func checkOnce(t target, stream bool) error {
	var err error
	for range 3 {
		if _, err = once(newClient(), t, stream); err == nil {
			return nil
		}
	}
	return err
}

// measureLatency prints the latency each target adds, non-streaming and
// streaming, and returns per kind [stream]{loopctl added, proxy added,
// loopctl added p99}.
func measureLatency(targets []target, fl flags) [2][3]time.Duration {
	fmt.Printf("\nLatency: %d interleaved rounds x %d sequential requests per target (keep-alive)\n", fl.rounds, fl.perRound)
	var sum [2][3]time.Duration // [stream]{loopctl added, proxy added, loopctl added p99}
	for k, stream := range []bool{false, true} {
		lat, errs := latencies(targets, stream, fl.rounds, fl.perRound)
		sum[k][0], sum[k][1], sum[k][2] = printLatency(targets, lat, errs, stream)
	}
	return sum
}

// measureThroughput prints the throughput each target sustains under the
// p99 bound, non-streaming and streaming, and returns loopctl's
// non-streaming rate (0 without it).
func measureThroughput(targets []target, fl flags) int {
	rate := 0
	fmt.Printf("\nThroughput with p99 <= %v and 100%% success (vegeta, %v per step, rates %v..%d req/s, interleaved):\n", fl.p99, fl.step, rates[0], fl.maxRate)
	for _, stream := range []bool{false, true} {
		kind := "non-streaming"
		if stream {
			kind = "streaming (whole stream)"
		}
		fmt.Printf("  %s\n", kind)
		for i, r := range search(targets, stream, fl.p99, fl.step, fl.maxRate) {
			fmt.Printf("    %-8s %s\n", targets[i].name, r)
			if !stream && targets[i].name == "loopctl" {
				rate = r.rate
			}
		}
	}
	return rate
}

// reportAllocs prints the allocations per request of the gateway's breaker
// part, in process on gw, and of BenchmarkHandler when root has it, and
// returns the latter if found, else the former.
func reportAllocs(gw *gateway.Gateway, root string) float64 {
	fmt.Printf("\nAllocations:\n")
	a := allocs(gw)
	if n, ok := handlerAllocs(root); ok {
		fmt.Printf("  BenchmarkHandler (go test -bench BenchmarkHandler -benchmem ./gateway/): %.0f allocs/request\n", n)
		a = n
	} else {
		fmt.Printf("  BenchmarkHandler not found in %s/gateway: the in-process count above is reported\n", root)
	}
	return a
}

// proxyTransport is the reverse proxy's transport: keep-alive with enough
// idle connections for the load generator's concurrency.
func proxyTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 1024
	return t
}

// newClient returns a keep-alive client for sequential requests.
func newClient() *http.Client {
	return &http.Client{Transport: proxyTransport(), Timeout: 10 * time.Second}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gateway benchmark:", err)
	proc.StopAll() // os.Exit skips the defers
	os.Exit(1)
}

// spaced writes d as people write it: "10 ms", "500 µs", "1.5 s".
func spaced(d time.Duration) string {
	switch {
	case d >= time.Second:
		return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + " ms"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Microsecond), 'f', -1, 64) + " µs"
}
