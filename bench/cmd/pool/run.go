package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"
)

// schedule is a run's timeline, as offsets from its t0: load from start
// to end, m3 sick from from to to.
type schedule struct{ start, from, to, end time.Duration }

// result is one gateway's measurement of one scenario.
type result struct {
	sc     scenario
	target string
	sched  schedule
	recs   []record
	arr    [3][]arrival // every request each member received
	pool   bool         // loopctl ran the pool (Portkey: its loadbalance mode)
	note   string
}

// gateway is one target of a run, with its members.
type gateway struct {
	target target
	trio   trio
	pool   bool
	note   string
	stop   func()
}

// runScenario runs sc against every target at once: fresh members for
// each, a fresh loopctl process, the same timeline and the same load.
func runScenario(ctx context.Context, e *env, sc scenario) ([]result, error) {
	t0 := time.Now()
	gws, err := startGateways(ctx, e, t0, sc)
	defer func() {
		for _, g := range gws {
			g.stop()
		}
	}()
	if err != nil {
		return nil, err
	}
	for _, g := range gws { // both kinds of request must work before the clock starts
		if err := warm(ctx, g.target, sc.w, e.o.clientTimeout); err != nil {
			return nil, err
		}
	}
	s := schedule{start: time.Since(t0) + 200*time.Millisecond}
	s.from, s.to, s.end = s.start+e.o.sickFrom, s.start+e.o.sickTo, s.start+e.o.duration
	recs := plan(s.start, s.end, e.o.rate)
	out := make([]result, len(gws))
	var wg sync.WaitGroup
	for i, g := range gws {
		for _, m := range g.trio {
			m.window(s.from, s.to)
		}
		wg.Go(func() {
			c := newClient(sc.w, e.o.clientTimeout)
			got := openLoop(ctx, c, g.target, t0, recs, e.o.maxInFlight)
			c.hc.CloseIdleConnections()
			r := result{sc: sc, target: g.target.name, sched: s, recs: got, pool: g.pool, note: g.note}
			for j, m := range g.trio {
				r.arr[j] = m.arrivals()
			}
			out[i] = r
		})
	}
	wg.Wait()
	return out, ctx.Err()
}

// startGateways starts every target of e with its own members; each
// gateway's stop stops its process (loopctl) and its members.
func startGateways(ctx context.Context, e *env, t0 time.Time, sc scenario) ([]gateway, error) {
	var gws []gateway
	for _, name := range e.o.targets {
		if name == "portkey" && e.portkeyBase == "" {
			continue // skipped at setup, with a message
		}
		t, err := startTrio(sc.w, sc, t0)
		if err != nil {
			return gws, err
		}
		if name == "portkey" {
			gws = append(gws, gateway{target: portkeyTarget(e.portkeyBase, t), trio: t, pool: true, stop: t.close})
			continue
		}
		ch, tg, pool, note, err := startLoopctl(ctx, e.loopctl, e.dir, t, sc, e.o.pools)
		if err != nil {
			t.close()
			return gws, err
		}
		if note != "" {
			fmt.Fprintf(os.Stderr, "pool: %s: loopctl: %s\n", sc.name, note)
		}
		gws = append(gws, gateway{target: tg, trio: t, pool: pool, note: note, stop: func() { ch.Stop(); t.close() }})
	}
	return gws, nil
}

// warm sends a plain and a streamed request to each member's share of a
// healthy t, without a session; each must succeed (they are not measured:
// their ids are not the load's).
func warm(ctx context.Context, t target, w wire, timeout time.Duration) error {
	c := newClient(w, timeout)
	defer c.hc.CloseIdleConnections()
	for i := range 4 {
		r := c.do(ctx, t, record{id: fmt.Sprintf("w%d", i), session: -1, stream: i%2 == 1})
		if !r.ok {
			return fmt.Errorf("%s: a warm-up request (stream %v) failed: %s", t.name, r.stream, r.why)
		}
	}
	return nil
}
