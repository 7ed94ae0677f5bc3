package metrics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loopctl/loopctl-go/agent"
	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"
	"github.com/loopctl/loopctl-go/retry"
)

// Kind is the value of the kind label.
type Kind string

// The kinds of breaker.
const (
	Model Kind = "model" // a model breaker (fallback.Manager)
	Tool  Kind = "tool"  // a tool breaker (breaker.Breaker, usually in a health.Registry)
	// Member is a pool member's breaker (breaker.Breaker of one deployment,
	// named member@upstream/model by the gateway).
	Member Kind = "member"
)

// Outcome is the value of the outcome label of loopctl_calls_total.
type Outcome string

// The outcomes of a call or model turn.
const (
	Success Outcome = "success" // the call succeeded
	Failure Outcome = "failure" // the call failed (whether or not it counted against the breaker)
	Cancel  Outcome = "cancel"  // the caller cancelled: no verdict
	Refused Outcome = "refused" // the breaker refused the call; nothing was sent
)

// Reason is the value of the reason label of loopctl_retries_total.
type Reason string

// The reasons for a retry.
const (
	Transient Reason = "transient"  // a transient error (5xx, timeout, connection)
	RateLimit Reason = "rate_limit" // HTTP 429
)

// ErrDuplicate is returned when a model breaker name is added twice.
var ErrDuplicate = errors.New("metrics: duplicate breaker name")

var (
	modelStates = []fallback.State{fallback.Primary, fallback.Fallback, fallback.Recovering}
	toolStates  = []breaker.State{breaker.Closed, breaker.Open, breaker.HalfOpen}
)

// Collector collects the breaker metrics of the sources added to it. The zero
// value is not usable: call [NewCollector].
type Collector struct {
	state       *prometheus.Desc
	transitions *prometheus.CounterVec
	calls       *prometheus.CounterVec
	retries     *prometheus.CounterVec

	mu         sync.Mutex
	managers   map[string]*fallback.Manager
	registries []*health.Registry
	sets       []breakerSet
}

// breakerSet is a source of breakers added with [Collector.AddBreakers].
type breakerSet struct {
	kind Kind
	list func() []*breaker.Breaker
}

// NewCollector returns a Collector with no sources.
func NewCollector() *Collector {
	return &Collector{
		state: prometheus.NewDesc("loopctl_breaker_state",
			"Current state of a breaker, one-hot: 1 for the current state, 0 for the others.",
			[]string{"breaker", "kind", "state"}, nil),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_breaker_transitions_total",
			Help: "State transitions of a breaker (a model breaker's chain advance counts as fallback to fallback).",
		}, []string{"breaker", "kind", "from", "to"}),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_calls_total",
			Help: "Calls through a breaker (tool calls, model turn attempts) by outcome.",
		}, []string{"breaker", "kind", "outcome"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "loopctl_retries_total",
			Help: "Retries by the retry ladder under a breaker, by reason.",
		}, []string{"breaker", "kind", "reason"}),
		managers: make(map[string]*fallback.Manager),
	}
}

// AddManager adds the state gauge of a model breaker under the breaker label
// name. A name already added is an error matching [ErrDuplicate].
func (c *Collector) AddManager(name string, m *fallback.Manager) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.managers[name]; dup {
		return fmt.Errorf("%w: model breaker %q", ErrDuplicate, name)
	}
	c.managers[name] = m
	return nil
}

// RemoveManager removes the model breaker added under name, if any. Its
// counters stay (counters never go down).
func (c *Collector) RemoveManager(name string) {
	c.mu.Lock()
	delete(c.managers, name)
	c.mu.Unlock()
}

// AddRegistry adds the state gauges of every tool breaker in r (every tool
// r knows at scrape time, labelled with the tool's name). Tools of different
// registries must have different names.
func (c *Collector) AddRegistry(r *health.Registry) {
	c.mu.Lock()
	if !slices.Contains(c.registries, r) {
		c.registries = append(c.registries, r)
	}
	c.mu.Unlock()
}

// AddBreakers adds the state gauges of the breakers list returns, called
// at every scrape (so the set may change), each labelled with its name
// (Breaker.Name) and kind k. list must be safe for concurrent use, and its
// breakers' names unique within k.
func (c *Collector) AddBreakers(k Kind, list func() []*breaker.Breaker) {
	c.mu.Lock()
	c.sets = append(c.sets, breakerSet{kind: k, list: list})
	c.mu.Unlock()
}

// AddAgent adds the state gauges of a's model breaker (under name, the same
// name given to [Collector.AgentEvents]) and of its tool breakers.
func (c *Collector) AddAgent(name string, a *agent.Agent) error {
	if err := c.AddManager(name, a.Models()); err != nil {
		return err
	}
	c.AddRegistry(a.Tools())
	return nil
}

// AgentEvents returns an event hook for agent.Config.OnEvent that counts the
// agent's transitions, calls and retries; model is the breaker label of its
// model breaker. To keep another hook, call both:
//
//	count := c.AgentEvents("gpt-4o")
//	cfg.OnEvent = func(ev agent.Event) { count(ev); mine(ev) }
//
// Model turn attempts count as calls of the model breaker, and a turn the
// model breaker refused (agent.EventTurnRefused, fallback.ErrExhausted) as a
// call with outcome refused;
// tool calls count under the tool that ran (the resolved backup, if any; a
// call that fell through from a failed probe also counts that probe's
// failure under the probed tool), and
// a call of an unknown tool or with bad arguments is not counted (no breaker
// was involved).
func (c *Collector) AgentEvents(model string) func(agent.Event) {
	return func(ev agent.Event) {
		switch ev.Kind {
		case agent.EventModelTransition:
			c.ModelTransitions(model)(ev.Transition)
		case agent.EventToolTransition:
			c.ToolTransitions(ev.Tool, ev.From, ev.To)
		case agent.EventTurnFinished:
			c.CountCall(model, Model, outcomeOf(ev.Err))
		case agent.EventTurnRefused:
			c.CountCall(model, Model, Refused)
		case agent.EventRetry:
			c.CountRetry(model, Model, reasonOf(ev.Err))
		case agent.EventToolCall:
			if ev.FallThrough != "" {
				// The probe of FallThrough failed; the call went on to ResolvedTool.
				c.CountCall(ev.FallThrough, Tool, Failure)
			}
			name := ev.ResolvedTool
			if name == "" {
				name = ev.Tool
			}
			switch ev.Outcome {
			case agent.OutcomeOK:
				c.CountCall(name, Tool, Success)
			case agent.OutcomeError, agent.OutcomePanic, agent.OutcomeTimeout:
				c.CountCall(name, Tool, Failure)
			case agent.OutcomeRefused:
				c.CountCall(name, Tool, Refused)
			case agent.OutcomeCancelled:
				c.CountCall(name, Tool, Cancel)
			}
		}
	}
}

// ModelTransitions returns a hook for fallback.Settings.OnTransition that
// counts the transitions of the model breaker labelled name.
func (c *Collector) ModelTransitions(name string) func(fallback.Transition) {
	return func(t fallback.Transition) {
		c.transitions.WithLabelValues(name, string(Model), t.From.String(), t.To.String()).Inc()
	}
}

// ToolTransitions counts a tool breaker's transition. Its signature is that of
// breaker.Settings.OnStateChange, so it can be used there directly.
func (c *Collector) ToolTransitions(name string, from, to breaker.State) {
	c.transitions.WithLabelValues(name, string(Tool), from.String(), to.String()).Inc()
}

// CountCall adds one call of the breaker name (of kind k) with outcome o.
func (c *Collector) CountCall(name string, k Kind, o Outcome) {
	c.calls.WithLabelValues(name, string(k), string(o)).Inc()
}

// CountRetry adds one retry under the breaker name (of kind k) for reason r.
func (c *Collector) CountRetry(name string, k Kind, r Reason) {
	c.retries.WithLabelValues(name, string(k), string(r)).Inc()
}

// RetryHook returns a hook for retry.Policy.OnRetry that counts retries under
// the breaker name of kind k, with the reason taken from the failed attempt's
// error (a 429 is rate_limit, anything else transient).
func (c *Collector) RetryHook(name string, k Kind) func(retry.Attempt) {
	return func(a retry.Attempt) { c.CountRetry(name, k, reasonOf(a.Err)) }
}

func outcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return Success
	case errors.Is(err, context.Canceled):
		return Cancel
	case errors.Is(err, breaker.ErrOpen), errors.Is(err, fallback.ErrExhausted):
		return Refused
	}
	return Failure
}

func reasonOf(err error) Reason {
	if retry.Classify(err) == retry.RateLimited {
		return RateLimit
	}
	return Transient
}

// Describe sends the descriptors of every metric (prometheus.Collector).
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.state
	c.transitions.Describe(ch)
	c.calls.Describe(ch)
	c.retries.Describe(ch)
}

// Collect reads every source's state with pure reads and sends the gauges and
// counters (prometheus.Collector).
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	names := make([]string, 0, len(c.managers))
	for n := range c.managers {
		names = append(names, n)
	}
	managers := make([]*fallback.Manager, len(names))
	slices.Sort(names)
	for i, n := range names {
		managers[i] = c.managers[n]
	}
	registries := slices.Clone(c.registries)
	sets := slices.Clone(c.sets)
	c.mu.Unlock()

	for i, m := range managers {
		cur := m.State()
		for _, s := range modelStates {
			ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, oneHot(s == cur), names[i], string(Model), s.String())
		}
	}
	for _, r := range registries {
		for _, h := range r.Summary() {
			for _, s := range toolStates {
				ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, oneHot(s == h.State), h.Tool, string(Tool), s.String())
			}
		}
	}
	for _, set := range sets {
		for _, b := range set.list() {
			cur := b.State()
			for _, s := range toolStates {
				ch <- prometheus.MustNewConstMetric(c.state, prometheus.GaugeValue, oneHot(s == cur), b.Name(), string(set.kind), s.String())
			}
		}
	}
	c.transitions.Collect(ch)
	c.calls.Collect(ch)
	c.retries.Collect(ch)
}

func oneHot(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Forget removes the state gauge and every counter series of the breaker
// labelled name, for a breaker that is gone for good (e.g. a route a
// gateway evicted): what a scrape shows stays bounded by the breakers that
// exist.
func (c *Collector) Forget(name string) {
	c.RemoveManager(name)
	l := prometheus.Labels{"breaker": name}
	c.transitions.DeletePartialMatch(l)
	c.calls.DeletePartialMatch(l)
	c.retries.DeletePartialMatch(l)
}
