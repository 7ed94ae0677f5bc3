package gateway

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/loopctl/loopctl-go/gateway/internal/wire"
	"github.com/loopctl/loopctl-go/metrics"
)

// meters are the gateway's Prometheus collectors: its own request-level
// ones (loopctl_gateway_*) and, through package meters, the breaker-level
// ones of its model breakers (loopctl_breaker_state,
// loopctl_breaker_transitions_total, loopctl_calls_total and
// loopctl_retries_total, kind="model").
type meters struct {
	reg       *prometheus.Registry
	handler   http.Handler
	breakers  *metrics.Collector
	requests  *prometheus.CounterVec
	fallbacks *prometheus.CounterVec
	hedges    *prometheus.CounterVec
	// exhausted counts same-model retries the retry budget refused (§8.3).
	exhausted *prometheus.CounterVec
	// translations counts translated answers by client and upstream wire.
	translations *prometheus.CounterVec
	first        *prometheus.HistogramVec
	overhead     prometheus.Histogram
	// poolRequests counts member attempts of pools (metrics_pool.go).
	poolRequests *prometheus.CounterVec

	cache sync.Map // counterKey -> prometheus.Counter
}

type counterKey struct {
	vec        *prometheus.CounterVec
	a, b, c, d string
}

func newMeters(reg *prometheus.Registry) *meters {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &meters{
		reg:      reg,
		breakers: metrics.NewCollector(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_gateway_requests_total",
			Help: "Client requests by wire (api: chat, responses, messages, count_tokens, embeddings), model, upstream model that served (or failed last) and outcome.",
		}, []string{"api", "model", "upstream_model", "outcome"}),
		fallbacks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_gateway_fallbacks_total",
			Help: "Attempts of a request that went to another upstream model after one failed.",
		}, []string{"model", "from", "to"}),
		hedges: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_gateway_hedges_total",
			Help: "Hedged attempts (SEMANTICS §7.4) by configured model and result: started, won (the hedge was served), lost (the first attempt was).",
		}, []string{"model", "result"}),
		exhausted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_retry_budget_exhausted_total",
			Help: "Same-model retries (and rate-limited waits) not made because the upstream model's retry budget was empty (SEMANTICS §8.3).",
		}, []string{"model"}),
		translations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_gateway_translations_total",
			Help: "Requests served by an entry on another wire, translated (docs/GATEWAY.md §8), by client wire (from) and upstream wire (to): chat, responses, messages.",
		}, []string{"from", "to"}),
		first: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "loopctl_gateway_upstream_first_byte_seconds",
			Help:    "Time from sending a request upstream to its first byte (streams: the first content chunk).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"upstream_model"}),
		overhead: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "loopctl_gateway_overhead_seconds",
			Help:    "Time the gateway adds to a request: total time minus the time spent on upstream requests and retry waits.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .1},
		}),
	}
	reg.MustRegister(m.requests, m.fallbacks, m.hedges, m.exhausted, m.translations, m.first, m.overhead, m.breakers)
	m.handler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	return m
}

// counter returns the counter of vec with labels a, b, c and, when vec has
// four labels, d.
func (m *meters) counter(vec *prometheus.CounterVec, a, b, c, d string) prometheus.Counter {
	k := counterKey{vec, a, b, c, d}
	if v, ok := m.cache.Load(k); ok {
		return v.(prometheus.Counter)
	}
	var ctr prometheus.Counter
	if vec == m.requests {
		ctr = vec.WithLabelValues(a, b, c, d)
	} else {
		ctr = vec.WithLabelValues(a, b, c)
	}
	m.cache.Store(k, ctr)
	return ctr
}

func (m *meters) request(api, model, upstream, outcome string, overhead time.Duration) {
	m.counter(m.requests, api, model, upstream, outcome).Inc()
	m.overhead.Observe(overhead.Seconds())
}

// translation counts a translated answer.
func (m *meters) translation(tr *wire.Translation) {
	m.translations.WithLabelValues(tr.From.String(), tr.To.API.String()).Inc()
}

func (m *meters) fallback(model, from, to string) { m.counter(m.fallbacks, model, from, to, "").Inc() }

// hedge counts a hedge of model's: started, won or lost.
func (m *meters) hedge(model, result string) { m.hedges.WithLabelValues(model, result).Inc() }

// budgetExhausted counts a retry the retry budget of upstream model refused.
func (m *meters) budgetExhausted(model string) { m.exhausted.WithLabelValues(model).Inc() }

func (m *meters) firstByte(upstream string, d time.Duration) {
	m.first.WithLabelValues(upstream).Observe(d.Seconds())
}

func (m *meters) call(model string, o metrics.Outcome) {
	m.breakers.CountCall(model, metrics.Model, o)
}

// forget removes every series labelled with the direct route name (one the
// gateway evicted); configured is true when name is also an upstream model
// of a configured model, whose series stay.
func (m *meters) forget(name string, configured bool) {
	m.breakers.Forget(name)
	m.requests.DeletePartialMatch(prometheus.Labels{"model": name})
	if !configured {
		m.first.DeleteLabelValues(name)
		m.exhausted.DeleteLabelValues(name)
	}
	m.cache.Range(func(k, _ any) bool {
		if ck := k.(counterKey); ck.a == name {
			m.cache.Delete(k)
		}
		return true
	})
}
