package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/loopctl/loopctl-go/outage"
)

const simulateUsage = `usage: loopctl simulate [flags]

Simulates N callers calling one service that goes down for an outage window, once with
plain retries (the retry ladder alone) and once with the tool breaker in front, in
virtual time with the real breaker and the real retry arithmetic, and prints both
policies side by side. Every attempt that reaches the dead service hangs for --timeout.
"Full traffic" is the last attempt that hung or was refused, after which every attempt
reaches the service and succeeds.`

// simulateFlags maps outage.Scenario fields to the flags that set them, for errors.
var simulateFlags = map[string]string{
	"Callers": "callers", "Interval": "interval", "Warmup": "warmup", "Outage": "outage",
	"Tail": "tail", "Timeout": "timeout", "Latency": "latency",
	"FailureThreshold": "failure-threshold", "Cooldown": "cooldown", "ProbeTimeout": "probe-timeout",
	"Retries": "retries", "RetryBase": "retry-base", "RetryMax": "retry-max", "Bucket": "bucket",
}

// simulateFlagSet binds the simulate flags to s (whose values are the defaults) and
// returns the flag set and the --svg destination.
func simulateFlagSet(s *outage.Scenario) (*flag.FlagSet, *string) {
	fs := NewFlagSet("simulate")
	fs.IntVar(&s.Callers, "callers", s.Callers, "number of callers, each with at most one call in flight")
	fs.DurationVar(&s.Interval, "interval", s.Interval, "time between a caller's scheduled calls")
	fs.DurationVar(&s.Warmup, "warmup", s.Warmup, "healthy time before the outage")
	fs.DurationVar(&s.Outage, "outage", s.Outage, "how long the service is down")
	fs.DurationVar(&s.Tail, "tail", s.Tail, "time after the fix during which calls are still scheduled")
	fs.DurationVar(&s.Timeout, "timeout", s.Timeout, "how long an attempt into the dead service hangs")
	fs.DurationVar(&s.Latency, "latency", s.Latency, "how long a healthy attempt takes")
	fs.IntVar(&s.FailureThreshold, "failure-threshold", s.FailureThreshold, "consecutive failures that trip the breaker")
	fs.DurationVar(&s.Cooldown, "cooldown", s.Cooldown, "breaker cooldown before a probe")
	fs.DurationVar(&s.ProbeTimeout, "probe-timeout", s.ProbeTimeout, "lease of the breaker's probe")
	fs.IntVar(&s.Retries, "retries", s.Retries, "retries after a transient failure (0: none)")
	fs.DurationVar(&s.RetryBase, "retry-base", s.RetryBase, "base backoff delay of the retry ladder")
	fs.DurationVar(&s.RetryMax, "retry-max", s.RetryMax, "maximum backoff delay of the retry ladder")
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "seed for caller phases and backoff jitter")
	fs.DurationVar(&s.Bucket, "bucket", s.Bucket, "width of a time bucket in the chart")
	svg := fs.String("svg", "", "also write a chart to `FILE` (SVG)")
	return fs, svg
}

func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	s := outage.DefaultScenario()
	fs, svg := simulateFlagSet(&s)
	if code, done := ParseFlags(fs, simulateUsage, args, stdout, stderr); done {
		return code
	}

	res, err := outage.Simulate(ctx, s)
	var fe *outage.FieldError
	switch {
	case errors.As(err, &fe):
		return UsageError(stderr, fs.Name(), fmt.Sprintf("--%s %s", simulateFlags[fe.Field], fe.Reason))
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return ExitFailure
	}
	if *svg != "" {
		var buf bytes.Buffer
		if err := res.WriteSVG(&buf); err != nil {
			fmt.Fprintf(stderr, "%s: svg: %v\n", fs.Name(), err)
			return ExitFailure
		}
		if err := os.WriteFile(*svg, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
			return ExitFailure
		}
	}
	if err := res.WriteTable(stdout); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return ExitFailure
	}
	return ExitOK
}
