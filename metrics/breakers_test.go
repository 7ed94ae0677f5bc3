package metrics_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/metrics"
)

// TestAddBreakers: the breakers a source lists are read at every scrape,
// one-hot under their names and the kind given, so a breaker the source
// stops listing is gone from the next scrape.
func TestAddBreakers(t *testing.T) {
	a, _ := breaker.New(breaker.Settings{Name: "member@up/a", FailureThreshold: 1})
	b, _ := breaker.New(breaker.Settings{Name: "member@up/b"})
	list := []*breaker.Breaker{a, b}
	c := metrics.NewCollector()
	c.AddBreakers(metrics.Member, func() []*breaker.Breaker { return list })
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	p, _ := a.Allow()
	p.Failure()
	want := `
# HELP loopctl_breaker_state Current state of a breaker, one-hot: 1 for the current state, 0 for the others.
# TYPE loopctl_breaker_state gauge
loopctl_breaker_state{breaker="member@up/a",kind="member",state="closed"} 0
loopctl_breaker_state{breaker="member@up/a",kind="member",state="half-open"} 0
loopctl_breaker_state{breaker="member@up/a",kind="member",state="open"} 1
loopctl_breaker_state{breaker="member@up/b",kind="member",state="closed"} 1
loopctl_breaker_state{breaker="member@up/b",kind="member",state="half-open"} 0
loopctl_breaker_state{breaker="member@up/b",kind="member",state="open"} 0
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "loopctl_breaker_state"); err != nil {
		t.Error(err)
	}
	list = list[:1]
	if n := testutil.CollectAndCount(c, "loopctl_breaker_state"); n != 3 {
		t.Errorf("after the source dropped up/b: %d state series, want 3", n)
	}
}
