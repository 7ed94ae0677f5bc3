package metrics_test

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/metrics"
)

// A gateway-style wiring: one model breaker, its transitions counted, its
// state read at scrape time.
func Example() {
	c := metrics.NewCollector()
	m, _ := fallback.New(fallback.Settings{Primary: "gpt-a", Chain: []string{"gpt-b"}, TripThreshold: 1,
		OnTransition: c.ModelTransitions("demo")})
	_ = c.AddManager("demo", m)
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)

	turn, _ := m.Begin()
	turn.Failure(fallback.Transient) // trips: primary -> fallback
	c.CountCall("demo", metrics.Model, metrics.Failure)

	families, _ := reg.Gather()
	for _, f := range families {
		for _, s := range f.GetMetric() {
			v := s.GetGauge().GetValue() + s.GetCounter().GetValue()
			if v == 0 {
				continue
			}
			fmt.Print(f.GetName(), "{")
			for i, l := range s.GetLabel() {
				if i > 0 {
					fmt.Print(",")
				}
				fmt.Printf("%s=%q", l.GetName(), l.GetValue())
			}
			fmt.Println("}", v)
		}
	}
	// Output:
	// loopctl_breaker_state{breaker="demo",kind="model",state="fallback"} 1
	// loopctl_breaker_transitions_total{breaker="demo",from="primary",kind="model",to="fallback"} 1
	// loopctl_calls_total{breaker="demo",kind="model",outcome="failure"} 1
}
