package main

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// probeKind is an "every model fails" probe: primary and backup both
// broken the same way, one request.
type probeKind struct {
	name, label string
	fault       fault
	limit       time.Duration // goal: answered within this
	want429     bool          // goal: a 429 with Retry-After
	hedge       bool          // loopctl's model gets hedge_after, as for the hang row
}

var allProbes = []probeKind{
	{name: "429", label: "every model 429 + Retry-After 5", fault: throttle, limit: 2 * time.Second, want429: true},
	{name: "500", label: "every model 500", fault: fail500, limit: 2 * time.Second},
	{name: "hang", label: "every model hangs (hedge_after 500ms)", fault: hang, limit: firstByte + time.Second, hedge: true},
	{name: "hang-nohedge", label: "every model hangs, no hedging", fault: hang, limit: firstByte + time.Second},
}

// probeResult is one gateway's answer to one probe.
type probeResult struct {
	probe      probeKind
	target     string
	took       time.Duration
	status     int    // 0: no answer (why)
	why        string // the transport failure, if any
	retryAfter string
	shape      bool // the body is an OpenAI error: {"error": {"message": ...}}
	upstream   int  // requests both upstreams received
}

// runProbe sends one non-streaming request to every target at once, each
// with fresh upstreams that are both broken and (loopctl) a fresh process
// with the base config.
func runProbe(ctx context.Context, e *env, p probeKind) ([]probeResult, error) {
	t0 := time.Now()
	gws, _, err := startGateways(ctx, e, t0, runConfig{hedge: p.hedge})
	defer func() {
		for _, g := range gws {
			g.stop()
		}
	}()
	if err != nil {
		return nil, err
	}
	for _, g := range gws {
		if err := warm(ctx, g.target, e.o.clientTimeout); err != nil {
			return nil, err
		}
		g.pair.primary.set(p.fault)
		g.pair.backup.set(p.fault)
	}
	out := make([]probeResult, len(gws))
	var wg sync.WaitGroup
	for i, g := range gws {
		wg.Go(func() {
			c := newClient(e.o.probeTimeout)
			defer c.hc.CloseIdleConnections()
			before := len(g.pair.primary.arrivals()) + len(g.pair.backup.arrivals())
			r, status, hdr, body := c.do(ctx, g.target, false)
			res := probeResult{probe: p, target: g.target.name, took: r.lat, status: status, shape: openAIError(body)}
			if status == 0 {
				res.why = r.why
			}
			if hdr != nil {
				res.retryAfter = hdr.Get("Retry-After")
			}
			res.upstream = len(g.pair.primary.arrivals()) + len(g.pair.backup.arrivals()) - before
			out[i] = res
		})
	}
	wg.Wait()
	return out, ctx.Err()
}

// openAIError reports whether body is an error in the OpenAI shape.
func openAIError(body string) bool {
	var v struct {
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	return json.Unmarshal([]byte(body), &v) == nil && v.Error != nil && v.Error.Message != ""
}

// met reports whether a probe result meets the goal.
func (r probeResult) met() bool {
	if r.status == 0 || r.took > r.probe.limit || !r.shape {
		return false
	}
	return !r.probe.want429 || (r.status == 429 && r.retryAfter != "")
}
