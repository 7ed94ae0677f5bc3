package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/loopctl/loopctl-go/bench/internal/serve"
	"github.com/loopctl/loopctl-go/gateway"
)

// once sends one request to t with c and returns its latency: until the
// whole body for a plain request, until the first body byte for a stream
// (time to first byte); the rest of a stream is read and checked too.
func once(c *http.Client, t target, stream bool) (time.Duration, error) {
	req, err := http.NewRequest("POST", t.url, bytes.NewReader(t.body(stream)))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range t.header {
		req.Header[k] = v
	}
	start := time.Now()
	res, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	var first [1]byte
	if _, err := io.ReadFull(res.Body, first[:]); err != nil {
		return 0, fmt.Errorf("HTTP %d: reading: %w", res.StatusCode, err)
	}
	ttfb := time.Since(start)
	rest, err := io.ReadAll(res.Body)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	all := string(first[:]) + string(rest)
	if res.StatusCode != 200 {
		return 0, fmt.Errorf("HTTP %d: %.300s", res.StatusCode, all)
	}
	if stream {
		if !strings.Contains(all, `"po"`) || !strings.Contains(all, "[DONE]") {
			return 0, fmt.Errorf("unexpected stream %.300q", all)
		}
		return ttfb, nil
	}
	if !strings.Contains(all, `"pong"`) {
		return 0, fmt.Errorf("unexpected answer %.300q", all)
	}
	return d, nil
}

// latencies runs rounds of n sequential requests per target, in a rotating
// order, and returns every target's latencies.
func latencies(ts []target, stream bool, rounds, n int) (map[string][]time.Duration, map[string][]string) {
	out, errs := map[string][]time.Duration{}, map[string][]string{}
	clients := make([]*http.Client, len(ts))
	for i := range ts {
		clients[i] = newClient()
		for range 20 { // warm the connection and the code paths
			if _, err := once(clients[i], ts[i], stream); err != nil { // counted, not fatal
				errs[ts[i].name] = append(errs[ts[i].name], "warm-up: "+err.Error())
			}
		}
	}
	for r := range rounds {
		for j := range ts {
			i := (r + j) % len(ts)
			for range n {
				d, err := once(clients[i], ts[i], stream)
				if err != nil { // counted and reported, not timed
					errs[ts[i].name] = append(errs[ts[i].name], err.Error())
					continue
				}
				out[ts[i].name] = append(out[ts[i].name], d)
			}
		}
	}
	for _, c := range clients {
		c.CloseIdleConnections()
	}
	return out, errs
}

// printLatency prints each target's median and p90 and the median it adds
// over direct, and the gateway's added median as a multiple of the proxy's.
// It returns loopctl's added median, the proxy's and loopctl's added p99.
func printLatency(ts []target, lat map[string][]time.Duration, errs map[string][]string, stream bool) (gw, px, p99 time.Duration) {
	kind := "non-streaming (whole response)"
	if stream {
		kind = "streaming (time to first byte)"
	}
	fmt.Printf("  %s\n", kind)
	added := printTargets(ts, lat, errs)
	if p := added["proxy"]; p > 0 {
		if stream { // issue 20's goals
			fmt.Printf("    loopctl added / proxy added = %.2fx (goal <= 1.2x)\n", float64(added["loopctl"])/float64(p))
		} else {
			fmt.Printf("    loopctl added / proxy added = %.2fx (goal <= 1.0x); loopctl added %v (goal <= 100µs)\n",
				float64(added["loopctl"])/float64(p), us(added["loopctl"]))
		}
	}
	if len(lat["loopctl"]) > 0 {
		p99 = serve.Quantile(lat["loopctl"], 0.99) - serve.Quantile(lat["direct"], 0.99)
	}
	return added["loopctl"], added["proxy"], p99
}

// printTargets prints each target's median and p90 and the median it adds
// over direct (the first target), with its failed requests, and returns the
// added medians by target; a target without one answer is said so.
func printTargets(ts []target, lat map[string][]time.Duration, errs map[string][]string) map[string]time.Duration {
	added := map[string]time.Duration{}
	if len(lat["direct"]) == 0 {
		fmt.Printf("    direct: no answer (%d failed requests)\n", len(errs["direct"]))
		return added
	}
	direct := serve.Quantile(lat["direct"], 0.5)
	for _, t := range ts {
		e := errs[t.name]
		if len(lat[t.name]) == 0 {
			fmt.Printf("    %-8s no answer (%d failed requests, first: %s)\n", t.name, len(e), first(e))
			continue
		}
		med := serve.Quantile(lat[t.name], 0.5)
		added[t.name] = med - direct
		fmt.Printf("    %-8s median %8v  p90 %8v  added median %8v", t.name, us(med), us(serve.Quantile(lat[t.name], 0.9)), us(med-direct))
		if len(e) > 0 {
			fmt.Printf("  (%d failed requests, first: %s)", len(e), e[0])
		}
		fmt.Println()
	}
	return added
}

// us rounds d to a microsecond.
func us(d time.Duration) time.Duration { return d.Round(time.Microsecond) }

// result is the outcome of a throughput search for one target.
type result struct {
	rate int            // highest rate passed, req/s (0: none)
	m    vegeta.Metrics // its metrics
	fail string         // why the next rate failed
}

func (r result) String() string {
	if r.rate == 0 {
		return "no rate passed: " + r.fail
	}
	s := fmt.Sprintf("%6d req/s (throughput %6.0f/s, p50 %v, p99 %v)", r.rate, r.m.Throughput, us(r.m.Latencies.P50), us(r.m.Latencies.P99))
	if r.fail != "" {
		s += "; next: " + r.fail
	}
	return s
}

// rates is the ladder the throughput search climbs, in req/s.
var rates = []int{500, 1000, 2000, 3000, 4000, 5000, 6000, 8000, 10000, 12000, 15000, 20000}

// attacker drives one target with vegeta through one client, so that its
// connections stay warm from one step to the next (a vegeta Attacker
// cannot be reused once its attack ends, a client can).
type attacker struct {
	t      target
	tr     vegeta.Targeter
	client *http.Client
}

func newAttacker(t target, stream bool) *attacker {
	body := t.body(stream)
	hdr := http.Header{"Content-Type": {"application/json"}}
	for k, v := range t.header {
		hdr[k] = v
	}
	tp := proxyTransport()
	tp.MaxIdleConnsPerHost, tp.MaxIdleConns = 2048, 2048
	return &attacker{
		t:      t,
		tr:     vegeta.NewStaticTargeter(vegeta.Target{Method: "POST", URL: t.url, Body: body, Header: hdr}),
		client: &http.Client{Transport: tp, Timeout: 5 * time.Second},
	}
}

// attack sends rate req/s for du and returns vegeta's metrics.
func (a *attacker) attack(rate int, du time.Duration) vegeta.Metrics {
	atk := vegeta.NewAttacker(vegeta.Client(a.client), vegeta.Workers(8), vegeta.MaxWorkers(2048))
	var m vegeta.Metrics
	for res := range atk.Attack(a.tr, vegeta.Rate{Freq: rate, Per: time.Second}, du, a.t.name) {
		m.Add(res)
	}
	m.Close()
	return m
}

// check reports why m fails at rate ("" if it passes): every request must
// succeed, p99 stay within bound and the throughput reach 95% of the rate.
func check(m vegeta.Metrics, rate int, bound time.Duration) string {
	switch {
	case m.Success < 1:
		return fmt.Sprintf("%d req/s: %.2f%% success %v", rate, 100*m.Success, m.Errors)
	case m.Latencies.P99 > bound:
		return fmt.Sprintf("%d req/s: p99 %v (throughput %.0f/s)", rate, us(m.Latencies.P99), m.Throughput)
	case m.Throughput < 0.95*float64(rate):
		return fmt.Sprintf("%d req/s: throughput %.0f/s", rate, m.Throughput)
	}
	return ""
}

// search climbs the rate ladder with every target in turn (a rotating
// order at each rate, so that noise from the rest of the machine hits all
// targets alike): a target stays in while it passes, and a failed step is
// tried once more before the target is out. It returns each target's
// highest passing rate.
func search(ts []target, stream bool, bound, step time.Duration, max int) []result {
	atks := make([]*attacker, len(ts))
	for i, t := range ts {
		atks[i] = newAttacker(t, stream)
		atks[i].attack(500, step/4) // warm up connections and code paths
	}
	defer func() {
		for _, a := range atks {
			a.client.CloseIdleConnections()
		}
	}()
	out := make([]result, len(ts))
	in := make([]bool, len(ts))
	for i := range in {
		in[i] = true
	}
	for k, rate := range rates {
		if rate > max {
			break
		}
		for j := range ts {
			i := (k + j) % len(ts)
			if !in[i] {
				continue
			}
			m := atks[i].attack(rate, step)
			why := check(m, rate, bound)
			if why != "" { // a second chance against a burst of noise
				m = atks[i].attack(rate, step)
				why = check(m, rate, bound)
			}
			if why != "" {
				in[i], out[i].fail = false, why
				continue
			}
			out[i].rate, out[i].m = rate, m
		}
	}
	return out
}

// allocs reports the allocations of the gateway's breaker part (the model
// breaker's gate and verdict, as the gateway calls them per request) and
// of one whole non-streaming request through the gateway's handler in
// process, against a canned upstream (the scaffolding's own allocations
// subtracted).
func allocs(gw *gateway.Gateway) float64 {
	lbs := gw.LocalBreakers()
	m := lbs[slices.IndexFunc(lbs, func(lb gateway.LocalBreaker) bool { return lb.Name == "bench" })].Manager
	breakerPart := testing.AllocsPerRun(10000, func() {
		turn, err := m.Begin()
		if err != nil {
			fail(err)
		}
		turn.Success()
	})
	fmt.Printf("  breaker part (fallback.Manager Begin + Turn.Success): %.0f allocs/request (target 0)\n", breakerPart)

	canned, err := gateway.New(gateway.Config{
		Upstreams: []gateway.Upstream{{Name: "up", BaseURL: "http://upstream.invalid/v1"}},
		Models:    []gateway.Model{{Name: "bench", Primary: "up/bench-model"}},
	}, gateway.Options{Transport: cannedUpstream{}})
	if err != nil {
		fail(err)
	}
	defer canned.Close()
	scaffold := func() (*httptest.ResponseRecorder, *http.Request) {
		req := httptest.NewRequest("POST", "/v1/chat/completions", bytes.NewReader(plainBody))
		req.Header.Set("Content-Type", "application/json")
		return httptest.NewRecorder(), req
	}
	base := testing.AllocsPerRun(500, func() { scaffold() })
	whole := testing.AllocsPerRun(500, func() {
		rec, req := scaffold()
		canned.ServeHTTP(rec, req)
		if rec.Code != 200 {
			fail(fmt.Errorf("canned gateway: HTTP %d: %s", rec.Code, rec.Body))
		}
	})
	fmt.Printf("  whole gateway handler, non-streaming, canned upstream: %.0f allocs/request (for context)\n", whole-base)
	return whole - base
}

// cannedUpstream answers every upstream request in process with the
// scripted completion (its response allocations count as the gateway's).
type cannedUpstream struct{}

func (cannedUpstream) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{
		StatusCode: 200, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(completion)),
		ContentLength: int64(len(completion)), Request: r,
	}, nil
}

// measurePool prints the median loopctl adds with a three-member pool
// (pool, a target of the same process) next to the one-entry model's, in
// the same interleaved rounds, non-streaming and streaming, and returns
// the non-streaming ratio of the two added medians (0 without a pool).
func measurePool(targets []target, pool target, fl flags) float64 {
	if pool.name == "" {
		return 0
	}
	var ts []target
	for _, t := range targets {
		if t.name == "direct" || t.name == "loopctl" {
			ts = append(ts, t)
		}
	}
	ts = append(ts, pool)
	fmt.Printf("\nPool: %d interleaved rounds x %d sequential requests (keep-alive), model bench (one entry) next to bench-pool (pool/p: 3 members)\n", fl.rounds, fl.perRound)
	ratio := 0.0
	for _, stream := range []bool{false, true} {
		lat, errs := latencies(ts, stream, fl.rounds, fl.perRound)
		kind := "non-streaming (whole response)"
		if stream {
			kind = "streaming (time to first byte)"
		}
		fmt.Printf("  %s\n", kind)
		added := printTargets(ts, lat, errs)
		if added["loopctl"] > 0 && added["loopctl-pool"] > 0 {
			r := float64(added["loopctl-pool"]) / float64(added["loopctl"])
			fmt.Printf("    loopctl-pool added / loopctl added = %.2fx (goal <= 1.05x)\n", r)
			if !stream {
				ratio = r
			}
		}
	}
	return ratio
}
