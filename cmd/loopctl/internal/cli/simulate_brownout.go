package cli

import (
	"context"
	"errors"
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
	err := overlayFlags(fs, s, &b, backoffFlag)
	return b, err
}

// backoffFlag is the flag of the long brownout's backoff (SEMANTICS §9.1).
const backoffFlag = "recovery-backoff"

// longBrownoutFor returns outage.LongBrownout with the flags set on the
// command line on top, as brownoutFor does, and --recovery-backoff's factor.
func longBrownoutFor(fs *flag.FlagSet, s outage.Scenario) (outage.BrownoutScenario, error) {
	b := outage.LongBrownout()
	err := overlayFlags(fs, s, &b, backoffFlag)
	b.RecoveryBackoff = fs.Lookup(backoffFlag).Value.(flag.Getter).Get().(float64)
	return b, err
}

// table is a comparison that writes itself as a text table.
type table interface{ WriteTable(io.Writer) error }

// runBrownout prints the brownout comparisons: the service failing a share
// of its calls, then the service slowing down, each with the consecutive
// rule alone and with the rate window side by side; then the long brownout
// with the rate window's breaker without and with the backoff of repeated
// trips (--recovery-backoff).
func runBrownout(ctx context.Context, fs *flag.FlagSet, s outage.Scenario, stdout, stderr io.Writer) int {
	runs := []func() (table, error){
		func() (table, error) { return brownoutRun(ctx, fs, outage.Failing, s) },
		func() (table, error) { return brownoutRun(ctx, fs, outage.Slow, s) },
		func() (table, error) {
			b, err := longBrownoutFor(fs, s)
			if err != nil {
				return nil, usageErr{err}
			}
			return outage.SimulateBackoff(ctx, b)
		},
	}
	var tables []table // all run first, so that a bad flag prints no table
	for _, run := range runs {
		res, err := run()
		var ue usageErr
		switch {
		case errors.As(err, &ue):
			return UsageError(stderr, fs.Name(), ue.Error())
		case err != nil:
			return simulateError(fs, err, stderr)
		}
		tables = append(tables, res)
	}
	for i, res := range tables {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := res.WriteTable(stdout); err != nil {
			return simulateError(fs, err, stderr)
		}
	}
	return ExitOK
}

// brownoutRun simulates the brownout of sickness k with the flags on top.
func brownoutRun(ctx context.Context, fs *flag.FlagSet, k outage.Sickness, s outage.Scenario) (table, error) {
	b, err := brownoutFor(fs, k, s)
	if err != nil {
		return nil, usageErr{err}
	}
	return outage.SimulateBrownout(ctx, b)
}

// usageErr marks an error of the command line (a flag that does not apply).
type usageErr struct{ error }
