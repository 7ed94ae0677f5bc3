package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// kind is one way the primary is broken during the outage, with the goals
// of issue 17 that apply to it.
type kind struct {
	name, label string
	fault       fault
	hedge       bool // loopctl's model gets hedge_after
	fast        bool // 5xx: the ladder's fast retries stay on the primary (its bound x (max_retries+1))
	transient   bool // a failed probe is Transient: up to trip_threshold probes per cooldown (SEMANTICS §3)
	slow        bool // p99 goal 1.5 s (rather than 3x outside, at least 250 ms)
	back        bool // goal: back on the primary within cooldown + 2 s

	// Partial outages (issue 28, SEMANTICS rev 4 §8); see partial.go.
	config runConfig // rev 4 keys the run adds to loopctl's config
	share  float64   // goal: requests to the sick primary ≤ share × the client requests of the outage
	under  bool      // ... strictly under that
	noP99  bool      // no p99 goal
	limit  int       // goal: requests to the sick primary ≤ limit (issue 34's slow run)
}

var allKinds = []kind{
	{name: "500", label: "HTTP 500", fault: fail500, fast: true, transient: true, back: true},
	{name: "hang", label: "hangs", fault: hang, hedge: true, slow: true, transient: true},
	{name: "429", label: "429 + Retry-After 5", fault: throttle, back: true},
	{name: "quota", label: "429 insufficient_quota, no hint", fault: quota},
	{name: "overload", label: "529 overloaded_error", fault: overload, back: true},
	{name: "stall", label: "stream stalls after its role chunk", fault: stall, hedge: true, slow: true, transient: true},
	{name: "long", label: "429 + Retry-After 120", fault: longHint},
	brownoutKind, brownoutBudgetKind, slowKind,
}

func kindNames() string {
	var n []string
	for _, k := range allKinds {
		n = append(n, k.name)
	}
	return strings.Join(n, ", ")
}

// schedule is a run's timeline, as offsets from its t0: load from start to
// end, the primary broken from down to fix.
type schedule struct{ start, down, fix, end time.Duration }

// row is one gateway's measurement of one kind.
type row struct {
	kind    kind
	target  string
	sched   schedule
	recs    []record
	primary []arrival // every request the primary received
	note    string
}

// gateway is one target of a kind's run, with its upstreams.
type gateway struct {
	target target
	pair   pair
	stop   func()
}

// runKind runs one outage kind against every target at once: fresh
// upstreams for each, a fresh loopctl process, the same timeline.
func runKind(ctx context.Context, e *env, k kind) ([]row, string, error) {
	t0 := time.Now()
	gws, note, err := startGateways(ctx, e, t0, k.runConfig())
	defer func() {
		for _, g := range gws {
			g.stop()
		}
	}()
	if err != nil {
		return nil, note, err
	}
	for _, g := range gws { // both kinds of request must work before the clock starts
		if err := warm(ctx, g.target, e.o.clientTimeout); err != nil {
			return nil, note, err
		}
	}
	s := schedule{start: time.Since(t0) + 200*time.Millisecond}
	s.down = s.start + e.o.before
	s.fix = s.down + e.o.outage
	s.end = s.fix + e.o.after
	breakAt := time.AfterFunc(time.Until(t0.Add(s.down)), func() {
		for _, g := range gws {
			g.pair.primary.set(k.fault)
		}
	})
	defer breakAt.Stop()
	fixAt := time.AfterFunc(time.Until(t0.Add(s.fix)), func() {
		for _, g := range gws {
			g.pair.primary.set(healthy)
		}
	})
	defer fixAt.Stop()
	rows := make([]row, len(gws))
	var wg sync.WaitGroup
	for i, g := range gws {
		wg.Go(func() {
			c := newClient(e.o.clientTimeout)
			recs := openLoop(ctx, c, g.target, t0, s.start, s.end, e.o.rate, e.o.maxInFlight)
			c.hc.CloseIdleConnections()
			rows[i] = row{kind: k, target: g.target.name, sched: s, recs: recs, primary: g.pair.primary.arrivals()}
			if g.target.name == "loopctl" {
				rows[i].note = note
			}
		})
	}
	wg.Wait()
	return rows, note, ctx.Err()
}

// startGateways starts every target of e with its own upstream pair; the
// stop func of each gateway stops its process (loopctl) and its upstreams.
func startGateways(ctx context.Context, e *env, t0 time.Time, c runConfig) ([]gateway, string, error) {
	var gws []gateway
	var note string
	for _, name := range e.o.targets {
		if name == "portkey" && e.portkeyURL == "" {
			continue // skipped at setup, with a message
		}
		p, err := startPair(t0, e.o.hold)
		if err != nil {
			return gws, note, err
		}
		if name == "portkey" {
			gws = append(gws, gateway{target: portkeyTarget(e.portkeyURL, p), pair: p, stop: p.close})
			continue
		}
		lp, n, err := startLoopctl(ctx, e.loopctl, e.dir, p, c, e.o)
		note = n
		if err != nil {
			p.close()
			return gws, note, err
		}
		gws = append(gws, gateway{target: lp.target, pair: p, stop: func() { lp.child.Stop(); p.close() }})
	}
	return gws, note, nil
}

// warm sends a few plain and streamed requests to a healthy t; each must
// succeed (they are not measured).
func warm(ctx context.Context, t target, timeout time.Duration) error {
	c := newClient(timeout)
	defer c.hc.CloseIdleConnections()
	for i := range 4 {
		r, status, _, body := c.do(ctx, t, i%2 == 1)
		if !r.ok {
			return fmt.Errorf("%s: a warm-up request (stream %v) failed: %s (status %d): %.300s", t.name, i%2 == 1, r.why, status, body)
		}
	}
	return nil
}
