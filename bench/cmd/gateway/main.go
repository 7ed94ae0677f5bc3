// Command gateway measures what loopctl's gateway adds to a request, next to
// the floor for a Go proxy and a peer gateway, in one run against the same
// scripted upstream on loopback:
//
//	(a) direct: the upstream itself;
//	(b) proxy: a minimal httputil.ReverseProxy;
//	(c) loopctl: the gateway (package gateway, in process, on its own
//	    loopback listener);
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
//     verdict) per request.
//
// Run it from bench/ (go run ./cmd/gateway, or ./gateway.sh); it takes
// under two minutes with the default flags. It is a benchmark, not a test:
// plain `go test` never runs it.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"runtime"
	"time"

	"github.com/loopctl/loopctl-go/gateway"
)

// target is one way to reach the upstream.
type target struct {
	name   string
	url    string // chat completions endpoint
	header http.Header
}

// options are the command's flags.
type options struct {
	rounds   int           // interleaved latency rounds
	perRound int           // sequential requests per target per round
	p99      time.Duration // the p99 bound of the throughput search
	step     time.Duration // duration of each vegeta attack
	maxRate  int           // highest request rate tried (req/s)
	portkey  string        // directory of the pinned Portkey install; "": skip (d)
}

// parseFlags reads the command line into options.
func parseFlags() options {
	var o options
	flag.IntVar(&o.rounds, "rounds", 12, "interleaved latency rounds")
	flag.IntVar(&o.perRound, "n", 100, "sequential requests per target per round")
	flag.DurationVar(&o.p99, "p99", 10*time.Millisecond, "the p99 bound of the throughput search")
	flag.DurationVar(&o.step, "step", 400*time.Millisecond, "duration of each vegeta attack in the throughput search")
	flag.IntVar(&o.maxRate, "max-rate", 20000, "highest request rate tried (req/s)")
	flag.StringVar(&o.portkey, "portkey", "portkey", "directory of the pinned Portkey install (with node_modules); \"\": skip (d)")
	flag.Parse()
	return o
}

// main starts the upstream and the targets in front of it, checks each
// target, then measures latency, throughput and allocations.
func main() {
	o := parseFlags()
	start := time.Now()
	fmt.Printf("gateway benchmark: GOMAXPROCS=%d, %s/%s, %s\n", runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, loadavg())

	up := serve(upstream{})
	defer up.Close()
	upURL := "http://" + up.Addr + "/v1"
	targets := []target{{name: "direct", url: upURL + "/chat/completions"}}

	px := serveProxy(up.Addr)
	defer px.Close()
	targets = append(targets, target{name: "proxy", url: "http://" + px.Addr + "/v1/chat/completions"})

	gw, gs := serveGateway(upURL)
	defer gw.Close()
	defer gs.Close()
	targets = append(targets, target{name: "loopctl", url: "http://" + gs.Addr + "/v1/chat/completions"})

	var pk *portkeyGateway
	if o.portkey != "" {
		var err error
		if pk, err = startPortkey(o.portkey, upURL); err != nil {
			fmt.Printf("portkey: skipped: %v\n", err)
		} else {
			targets = append(targets, pk.target)
		}
	}
	defer func() {
		if pk != nil {
			pk.stop()
		}
	}()
	targets, pk = checkTargets(targets, pk)

	measureLatency(targets, o)
	measureThroughput(targets, o)
	fmt.Printf("\nAllocations:\n")
	allocs(gw)
	fmt.Printf("\ntotal time %v\n", time.Since(start).Round(time.Second))
}

// serveProxy starts target (b): a minimal httputil.ReverseProxy to the
// upstream at addr.
func serveProxy(addr string) *server {
	u, _ := url.Parse("http://" + addr)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = proxyTransport()
	rp.FlushInterval = -1                    // flush every write: streams pass through
	rp.ErrorLog = log.New(io.Discard, "", 0) // failures are counted on the client side
	return serve(rp)
}

// serveGateway starts target (c): loopctl's gateway with one upstream (at
// upURL) and one model, on its own loopback listener.
func serveGateway(upURL string) (*gateway.Gateway, *server) {
	gw, err := gateway.New(gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "up", BaseURL: upURL}},
		Models:    []gateway.Model{{Name: "bench", Primary: "up/bench-model"}},
	}, gateway.Options{})
	if err != nil {
		fail(err)
	}
	return gw, serve(gw)
}

// checkTargets sends every target one request of each kind before it is
// timed. A failure is fatal, except for Portkey (the last target), which is
// stopped and dropped, with its log; it returns the targets left and pk, nil
// once dropped.
func checkTargets(targets []target, pk *portkeyGateway) ([]target, *portkeyGateway) {
	for i := 0; i < len(targets); i++ {
		t := targets[i]
		for _, stream := range []bool{false, true} {
			if _, err := once(newClient(), t, stream); err != nil {
				if pk == nil || t.name != "portkey" {
					fail(fmt.Errorf("%s (stream %v): %w", t.name, stream, err))
				}
				fmt.Printf("portkey: skipped: a check request (stream %v) failed: %v\nits log ends:\n%s\n", stream, err, tail(pk.log.String(), 1500))
				pk.stop()
				pk = nil
				targets = targets[:i]
				break
			}
		}
	}
	return targets, pk
}

// measureLatency prints the median latency each target adds over direct,
// non-streaming and streaming.
func measureLatency(targets []target, o options) {
	fmt.Printf("\nLatency: %d interleaved rounds x %d sequential requests per target (keep-alive)\n", o.rounds, o.perRound)
	for _, stream := range []bool{false, true} {
		lat, errs := latencies(targets, stream, o.rounds, o.perRound)
		printLatency(targets, lat, errs, stream)
	}
}

// measureThroughput prints the throughput each target sustains with p99
// under o.p99, non-streaming and streaming.
func measureThroughput(targets []target, o options) {
	fmt.Printf("\nThroughput with p99 <= %v and 100%% success (vegeta, %v per step, rates %v..%d req/s, interleaved):\n", o.p99, o.step, rates[0], o.maxRate)
	for _, stream := range []bool{false, true} {
		kind := "non-streaming"
		if stream {
			kind = "streaming (whole stream)"
		}
		fmt.Printf("  %s\n", kind)
		for i, r := range search(targets, stream, o.p99, o.step, o.maxRate) {
			fmt.Printf("    %-8s %s\n", targets[i].name, r)
		}
	}
}

// server is an http.Server on a loopback listener.
type server struct {
	*http.Server
	ln net.Listener
}

// serve starts h on a fresh loopback port.
func serve(h http.Handler) *server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	s := &server{Server: &http.Server{Handler: h, Addr: ln.Addr().String(), ReadHeaderTimeout: 10 * time.Second}, ln: ln}
	go s.Serve(ln)
	return s
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

// loadavg returns the 1-minute load average, for context.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil || len(b) < 4 {
		return "load average unknown"
	}
	f := string(b)
	for i, c := range f {
		if c == ' ' {
			return "load average " + f[:i] + " (1 min)"
		}
	}
	return "load average unknown"
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gateway benchmark:", err)
	os.Exit(1)
}
