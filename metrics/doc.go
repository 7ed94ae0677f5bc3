// Package metrics exports the state of loopctl's breakers to Prometheus.
//
// A [Collector] is a prometheus.Collector. Its gauges are read from the
// breakers' pure reads at scrape time (a scrape changes nothing and never
// takes a probe slot); its counters are fed by the events the breakers and the
// agent already report (agent.Config.OnEvent, fallback.Settings.OnTransition,
// breaker.Settings.OnStateChange), so nothing is polled between scrapes.
//
// The metrics, shared with the gateway and the MCP proxy:
//
//	loopctl_breaker_state{breaker,kind,state}          gauge, one-hot: 1 for the current state, 0 for the others
//	loopctl_breaker_transitions_total{breaker,kind,from,to}
//	loopctl_calls_total{breaker,kind,outcome}          outcome: success, failure, cancel, refused
//	loopctl_retries_total{breaker,kind,reason}         reason: transient, rate_limit
//
// kind is "model" for a model breaker (a fallback.Manager, named by the caller,
// usually after its primary model) and "tool" for a tool breaker (named after
// its tool), "member" for a pool member's breaker (a breaker.Breaker of one
// deployment, named by its Name: member@upstream/model in the gateway);
// state is the State's String(): closed, open, half-open for tools and
// members, primary, fallback, recovering for models.
//
// Sources are added by kind, so that each program wires what it has:
//
//	c := metrics.NewCollector()
//	cfg.OnEvent = c.AgentEvents("gpt-4o") // counters of an agent.Agent
//	a, _ := agent.New(cfg)
//	c.AddAgent("gpt-4o", a)               // its state gauges
//	prometheus.MustRegister(c)
//
// A gateway adds one fallback.Manager per configured model with
// [Collector.AddManager] and routes its OnTransition to
// [Collector.ModelTransitions]; an MCP proxy adds its health.Registry with
// [Collector.AddRegistry] and routes its OnStateChange to
// [Collector.ToolTransitions]; a gateway's pool member breakers come from
// [Collector.AddBreakers], read at each scrape. Calls and retries that do not come from an
// agent are counted with [Collector.CountCall] and [Collector.CountRetry].
//
// A Collector is safe for concurrent use.
package metrics
