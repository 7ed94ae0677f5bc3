package cli

import (
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/mcptool"
	"github.com/prometheus/client_golang/prometheus"
)

// proxyMetrics are mcp-proxy's Prometheus metrics, with the team's names:
// loopctl_mcp_calls_total{server,tool,outcome}, and the breaker-level
// loopctl_breaker_state, loopctl_breaker_transitions_total and
// loopctl_calls_total with kind="tool".
type proxyMetrics struct {
	reg         *prometheus.Registry
	mcpCalls    *prometheus.CounterVec
	calls       *prometheus.CounterVec
	transitions *prometheus.CounterVec
}

// newProxyMetrics registers the metrics; the state gauge reads breakers (a
// pure read) from tools at each scrape.
func newProxyMetrics(tools func() *health.Registry) *proxyMetrics {
	m := &proxyMetrics{
		reg: prometheus.NewRegistry(),
		mcpCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_mcp_calls_total", Help: "MCP tool calls through the proxy, by upstream server, tool and outcome.",
		}, []string{"server", "tool", "outcome"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_calls_total", Help: "Calls gated by a breaker, by verdict (success, failure, cancel, refused).",
		}, []string{"breaker", "kind", "outcome"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_breaker_transitions_total", Help: "Breaker state changes.",
		}, []string{"breaker", "kind", "from", "to"}),
	}
	m.reg.MustRegister(m.mcpCalls, m.calls, m.transitions, stateCollector{tools})
	return m
}

// call counts one proxied call. verdict maps the MCP outcome to the
// breaker-level outcome label.
func (m *proxyMetrics) call(ci mcptool.CallInfo, counted bool) {
	m.mcpCalls.WithLabelValues(ci.Server, ci.Tool, string(ci.Outcome)).Inc()
	v := "success"
	switch ci.Outcome {
	case mcptool.OutcomeFailure, mcptool.OutcomeTimeout:
		v = "failure"
	case mcptool.OutcomeToolError:
		if counted {
			v = "failure"
		}
	case mcptool.OutcomeCancel, mcptool.OutcomeInvalidArguments:
		v = "cancel"
	case mcptool.OutcomeRefused:
		v = "refused"
	}
	m.calls.WithLabelValues(ci.Breaker, "tool", v).Inc()
}

// transition counts one breaker state change.
func (m *proxyMetrics) transition(name string, from, to breaker.State) {
	m.transitions.WithLabelValues(name, "tool", from.String(), to.String()).Inc()
}

var stateDesc = prometheus.NewDesc("loopctl_breaker_state",
	"Breaker state, one-hot: 1 for the current state, 0 for the others.", []string{"breaker", "kind", "state"}, nil)

// stateCollector exports loopctl_breaker_state from a registry's Summary.
type stateCollector struct{ tools func() *health.Registry }

func (c stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- stateDesc }

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	r := c.tools()
	if r == nil {
		return
	}
	for _, th := range r.Summary() {
		for _, s := range []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen} {
			v := 0.0
			if th.State == s {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, th.Tool, "tool", s.String())
		}
	}
}
