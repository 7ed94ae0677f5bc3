package cli

import (
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/mcptool"
	"github.com/loopctl/loopctl-go/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

// proxyMetrics are mcp-proxy's Prometheus metrics, with the team's names:
// loopctl_mcp_calls_total{server,tool,outcome}, and the breaker-level
// loopctl_breaker_state, loopctl_breaker_transitions_total and
// loopctl_calls_total (kind="tool") from package metrics.
type proxyMetrics struct {
	reg      *prometheus.Registry
	breakers *metrics.Collector
	mcpCalls *prometheus.CounterVec
}

func newProxyMetrics() *proxyMetrics {
	m := &proxyMetrics{
		reg:      prometheus.NewRegistry(),
		breakers: metrics.NewCollector(),
		mcpCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_mcp_calls_total", Help: "MCP tool calls through the proxy, by upstream server, tool and outcome.",
		}, []string{"server", "tool", "outcome"}),
	}
	m.reg.MustRegister(m.mcpCalls, m.breakers)
	return m
}

// watch adds the state gauges of r's breakers.
func (m *proxyMetrics) watch(r *health.Registry) { m.breakers.AddRegistry(r) }

// call counts one proxied call; counted tells whether an isError result
// counted as a failure of its breaker.
func (m *proxyMetrics) call(ci mcptool.CallInfo, counted bool) {
	m.mcpCalls.WithLabelValues(ci.Server, ci.Tool, string(ci.Outcome)).Inc()
	v := metrics.Success
	switch ci.Outcome {
	case mcptool.OutcomeFailure, mcptool.OutcomeTimeout:
		v = metrics.Failure
	case mcptool.OutcomeToolError:
		if counted {
			v = metrics.Failure
		}
	case mcptool.OutcomeCancel, mcptool.OutcomeInvalidArguments, mcptool.OutcomeServerDown, mcptool.OutcomeRejected:
		v = metrics.Cancel
	case mcptool.OutcomeRefused:
		v = metrics.Refused
	}
	m.breakers.CountCall(ci.Breaker, metrics.Tool, v)
}
