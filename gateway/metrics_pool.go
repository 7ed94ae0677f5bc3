package gateway

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/loopctl/loopctl-go/pool"
)

// The pools' metrics (docs/GATEWAY.md §11.5): a counter of member attempts
// by outcome, fed at the one point where the walk settles a member
// attempt (meters.poolAttempt), and gauges read from pool.Pool.Status at
// scrape time (poolGauges: no goroutine, nothing polled between scrapes).
// The member breakers' states join loopctl_breaker_state with
// kind="member". Every label value comes from the config (a pool's name,
// a member's upstream/model); no session key or hash is ever one.

// memberOutcome is the outcome label of loopctl_pool_requests_total.
type memberOutcome string

// The outcomes of a member attempt.
const (
	poolOutSuccess   memberOutcome = "success"    // the member served
	poolOutFailure   memberOutcome = "failure"    // a failure with a verdict (5xx, a timeout, a connection error)
	poolOutRateLimit memberOutcome = "rate_limit" // a throttle, an overload or an exhausted quota
	poolOutCancel    memberOutcome = "cancel"     // the client left, or a hedge's rival won (its wait may count against the member all the same: pool.Attempt.Lose)
	poolOutNoVerdict memberOutcome = "no_verdict" // an answer with no verdict (a malformed request, a refusal)
)

// failureOutcome is the outcome of a member attempt settled with the
// failure f: rate_limit for a throttle, an overload or a quota, else
// failure.
func failureOutcome(f fallback.Failure) memberOutcome {
	if f.Kind == fallback.RateLimit || f.Kind == fallback.Quota {
		return poolOutRateLimit
	}
	return poolOutFailure
}

// poolRequestsHelp is the help of loopctl_pool_requests_total.
const poolRequestsHelp = "Member attempts of a pool by pool, member (upstream/model) and outcome: success, failure, rate_limit, cancel, no_verdict."

// newPoolRequests is loopctl_pool_requests_total.
func newPoolRequests() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: "loopctl_pool_requests_total", Help: poolRequestsHelp},
		[]string{"pool", "member", "outcome"})
}

// addPools registers the pools' collectors of g: the member attempt
// counter, the member gauges and the member breakers' states. A reloaded
// gateway keeps g's meters, and every scrape reads the gateway in force.
func (m *meters) addPools(g *Gateway) {
	m.poolRequests = newPoolRequests()
	m.reg.MustRegister(m.poolRequests, poolGauges{g})
	m.breakers.AddBreakers(metrics.Member, func() []*breaker.Breaker {
		cur := g.latest()
		var out []*breaker.Breaker
		for _, ref := range cur.memberRefs() {
			out = append(out, cur.memberBreaker(ref))
		}
		return out
	})
}

// poolAttempt counts a member attempt of the pool named pool on member
// (upstream/model) settled with outcome o. The walk calls it once per
// member attempt, where it settles the attempt.
func (m *meters) poolAttempt(pool, member string, o memberOutcome) {
	m.counter(m.poolRequests, pool, member, string(o), "").Inc()
}

// countSettled counts a member attempt on mt, a member target of one of
// g's pools, settled with outcome o, under the pool that lists mt (each
// pool has its own member targets).
func (g *Gateway) countSettled(mt *target, o memberOutcome) {
	for _, pd := range g.pools.order {
		for _, m := range pd.members {
			if m == mt {
				g.m.poolAttempt(pd.cfg.Name, mt.ref, o)
				return
			}
		}
	}
}

// poolGauges is the collector of the member gauges, read from every
// deployment's pool.Status at scrape time.
type poolGauges struct{ g *Gateway }

var (
	memberStateDesc = prometheus.NewDesc("loopctl_pool_member_state",
		"State of a pool member's breaker, one-hot over closed, open, half-open.", []string{"member", "state"}, nil)
	memberLatencyDesc = prometheus.NewDesc("loopctl_pool_member_latency_estimate_seconds",
		"A pool member's latency estimate (time to first content) by kind: stream, whole; absent without a recent sample of the kind.", []string{"member", "kind"}, nil)
	memberInFlightDesc = prometheus.NewDesc("loopctl_pool_member_in_flight",
		"A pool member's attempts in flight in this process.", []string{"member"}, nil)
	memberHeadroomDesc = prometheus.NewDesc("loopctl_pool_member_headroom",
		"What a pool member's answers said is left, less what started since, by kind: requests, tokens, input_tokens, output_tokens; absent when unknown.", []string{"member", "kind"}, nil)
)

// memberStates are the states of loopctl_pool_member_state.
var memberStates = []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen}

func (c poolGauges) Describe(ch chan<- *prometheus.Desc) {
	ch <- memberStateDesc
	ch <- memberLatencyDesc
	ch <- memberInFlightDesc
	ch <- memberHeadroomDesc
}

func (c poolGauges) Collect(ch chan<- prometheus.Metric) {
	g := c.g.latest()
	now := g.now()
	seen := map[string]bool{}
	for _, pd := range g.pools.order {
		for i, mt := range pd.members {
			if seen[mt.ref] { // a deployment's figures and breaker are its own, whichever pool lists it
				continue
			}
			seen[mt.ref] = true
			collectMember(ch, mt.ref, pd.p.Status(now, i))
		}
	}
}

// collectMember sends the gauges of the member ref, whose status is st.
func collectMember(ch chan<- prometheus.Metric, ref string, st pool.Status) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, s := range memberStates {
		gauge(memberStateDesc, oneHot(st.Breaker.State == s), ref, s.String())
	}
	for kind, d := range map[string]time.Duration{"stream": st.Stream, "whole": st.Whole} {
		if d > 0 {
			gauge(memberLatencyDesc, d.Seconds(), ref, kind)
		}
	}
	gauge(memberInFlightDesc, float64(st.InFlight), ref)
	h := st.Headroom
	for _, l := range []struct {
		kind string
		l    pool.Limit
	}{{"requests", h.Requests}, {"tokens", h.Tokens}, {"input_tokens", h.InputTokens}, {"output_tokens", h.OutputTokens}} {
		if !l.l.Reset.IsZero() {
			gauge(memberHeadroomDesc, float64(l.l.Remaining), ref, l.kind)
		}
	}
}

// oneHot is 1 for true, 0 for false.
func oneHot(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
