package outage_test

import (
	"context"
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/outage"
)

// The page's comparison, measured: a 5-minute outage, 2-minute timeouts, 100 callers.
func ExampleSimulate() {
	res, err := outage.Simulate(context.Background(), outage.DefaultScenario())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, o := range []outage.Outcome{res.Plain, res.Breaker} {
		m := o.Metrics
		fmt.Printf("%-13s dead attempts %3d, refused %4d, probes %d, waiting %v\n",
			o.Policy, m.ReachedDead, m.Refused, m.Probes, m.Waiting.Round(time.Minute))
	}
	// Output:
	// plain retries dead attempts 300, refused    0, probes 0, waiting 10h1m0s
	// breaker       dead attempts 179, refused 1553, probes 79, waiting 4h1m0s
}
