package cli

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/loopctl/loopctl-go/outage"
)

// brownoutScenario is the --scenario name of the partial outage.
const brownoutScenario = "brownout"

// brownoutFor returns the brownout of sickness k with the flags set on the
// command line (taken from s, which the flag set is bound to) on top: the
// flags whose outage.Scenario field the brownout has too (--callers,
// --interval, --warmup, --tail, --latency, the breaker's, the ladder's and
// --seed). Any other flag is an error naming it.
func brownoutFor(fs *flag.FlagSet, k outage.Sickness, s outage.Scenario) (outage.BrownoutScenario, error) {
	b := outage.DefaultBrownout(k)
	err := overlayFlags(fs, s, &b)
	return b, err
}

// runBrownout prints the brownout comparison: the service failing a share
// of its calls, then the service slowing down, each with the consecutive
// rule alone and with the rate window side by side.
func runBrownout(ctx context.Context, fs *flag.FlagSet, s outage.Scenario, stdout, stderr io.Writer) int {
	for i, k := range []outage.Sickness{outage.Failing, outage.Slow} {
		b, err := brownoutFor(fs, k, s)
		if err != nil {
			return UsageError(stderr, fs.Name(), err.Error())
		}
		res, err := outage.SimulateBrownout(ctx, b)
		if err != nil {
			return simulateError(fs, err, stderr)
		}
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := res.WriteTable(stdout); err != nil {
			return simulateError(fs, err, stderr)
		}
	}
	return ExitOK
}
