package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/loopctl/loopctl-go/outage"
)

const simulateUsage = `usage: loopctl simulate [flags]

Simulates N callers calling one service that goes down for an outage window, once with
plain retries (the retry ladder alone) and once with the tool breaker in front, in
virtual time with the real breaker and the real retry arithmetic, and prints both
policies side by side with the winner of each row. Every attempt that reaches the dead
service hangs for --timeout, except the breaker's probe, which is cut at the end of its
lease (--probe-timeout). A call refused on its first attempt ends at once; a retry
refused while the breaker is half-open (a probe in flight) backs off and retries. "The
fix" is the end of the last outage; "full traffic" is the last attempt that hung or was
refused, after which every attempt reaches the service and succeeds.

Scenarios (--scenario; the other flags change the chosen one):
  default   the source page's comparison: a 5m outage, 2m timeouts, 100 callers every 10s
  short     the same with a 30s outage (--outage 30s), shorter than the timeout
  flapping  down 3m, up 20s (less than the 30s cooldown), down again 2m (--outage 3m
            --up 20s --relapse 2m)
  brownout  a partial outage, twice: the service fails 3 calls in 10 (never two in a
            row), then answers every call after 2s, for 2m; 40 callers every 2s, a
            backup for refused calls; the breaker with the consecutive rule alone
            against the breaker with the failure-rate window (failure rate 0.25 over
            10s, at least 20 calls) and slow calls (from 1s, rate 0.5), side by side
            (--callers, --interval, --warmup, --tail, --latency, the breaker's and the
            ladder's flags and --seed apply; not --svg); then a long brownout (3m of 3
            failures in 10, a 5s cooldown) with the rate window's breaker without and
            with the backoff of repeated trips (cooldown × --recovery-backoff per
            repeated trip, up to 10 cooldowns)`

// simulateFlags maps outage.Scenario fields to the flags that set them, for errors.
var simulateFlags = map[string]string{
	"Callers": "callers", "Interval": "interval", "Warmup": "warmup", "Outage": "outage",
	"Up": "up", "Relapse": "relapse", "Tail": "tail", "Timeout": "timeout", "Latency": "latency",
	"FailureThreshold": "failure-threshold", "Cooldown": "cooldown", "ProbeTimeout": "probe-timeout",
	"Retries": "retries", "RetryBase": "retry-base", "RetryMax": "retry-max", "Bucket": "bucket",
	"RecoveryBackoff": backoffFlag, // the long brownout's (outage.BrownoutScenario), set by longBrownoutFor
}

// simulateFlagSet binds the simulate flags to s (whose values are the defaults) and
// returns the flag set, the --scenario name and the --svg destination.
func simulateFlagSet(s *outage.Scenario) (*flag.FlagSet, *string, *string) {
	fs := NewFlagSet("simulate")
	scenario := fs.String("scenario", "default", "the scenario: "+strings.Join(scenarioNames(), ", ")+" (see above)")
	fs.IntVar(&s.Callers, "callers", s.Callers, "number of callers, each with at most one call in flight")
	fs.DurationVar(&s.Interval, "interval", s.Interval, "time between a caller's scheduled calls")
	fs.DurationVar(&s.Warmup, "warmup", s.Warmup, "healthy time before the outage")
	fs.DurationVar(&s.Outage, "outage", s.Outage, "how long the service is down")
	fs.DurationVar(&s.Up, "up", s.Up, "how long a flapping service is up between its two outages (needs --relapse)")
	fs.DurationVar(&s.Relapse, "relapse", s.Relapse, "how long a flapping service is down the second time (0: no second outage)")
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
	fs.Float64(backoffFlag, outage.LongBrownout().RecoveryBackoff,
		"brownout only: the factor of the long brownout's backoff of repeated trips (above 1)")
	return fs, scenario, svg
}

// fieldWord matches a Scenario field name in a FieldError's reason.
var fieldWord = regexp.MustCompile(`\b[A-Z][A-Za-z]+\b`)

// flagNames rewrites the Scenario field names in reason as the flags that set them
// ("must not exceed RetryMax 10s" becomes "must not exceed --retry-max 10s").
func flagNames(reason string) string {
	return fieldWord.ReplaceAllStringFunc(reason, func(w string) string {
		if f, ok := simulateFlags[w]; ok {
			return "--" + f
		}
		return w
	})
}

// applyScenario returns the scenario named name with the values of the flags set on
// the command line (taken from s, which the flag set is bound to) on top.
func applyScenario(fs *flag.FlagSet, name string, s outage.Scenario) (outage.Scenario, error) {
	base, ok := outage.ScenarioNamed(name)
	if !ok {
		return s, fmt.Errorf("--scenario %q is not one of %s", name, strings.Join(scenarioNames(), ", "))
	}
	err := overlayFlags(fs, s, &base, "svg")
	return base, err
}

// overlayFlags copies onto *dst (a scenario struct) the fields of s whose
// flags were set on the command line (s is what fs is bound to). A set flag
// other than --scenario and the ignored ones that names no field of *dst is
// an error naming the first such flag; the others are copied all the same.
func overlayFlags(fs *flag.FlagSet, s outage.Scenario, dst any, ignored ...string) error {
	fields := map[string]string{"seed": "Seed"}
	for field, flagName := range simulateFlags {
		fields[flagName] = field
	}
	src, to := reflect.ValueOf(s), reflect.ValueOf(dst).Elem()
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch field, ok := fields[f.Name]; {
		case f.Name == "scenario" || slices.Contains(ignored, f.Name):
		case ok && to.FieldByName(field).IsValid():
			to.FieldByName(field).Set(src.FieldByName(field))
		case err == nil:
			err = fmt.Errorf("--%s does not apply to --scenario %s", f.Name, fs.Lookup("scenario").Value.String())
		}
	})
	return err
}

// scenarioNames are the --scenario names: outage's and the brownout.
func scenarioNames() []string { return append(outage.ScenarioNames(), brownoutScenario) }

func runSimulate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	s := outage.DefaultScenario()
	fs, name, svg := simulateFlagSet(&s)
	if code, done := ParseFlags(fs, simulateUsage, args, stdout, stderr); done {
		return code
	}
	if *name == brownoutScenario {
		if *svg != "" {
			return UsageError(stderr, fs.Name(), "--svg does not apply to --scenario "+brownoutScenario)
		}
		return runBrownout(ctx, fs, s, stdout, stderr)
	}
	s, err := applyScenario(fs, *name, s)
	if err != nil {
		return UsageError(stderr, fs.Name(), err.Error())
	}

	res, err := outage.Simulate(ctx, s)
	if err != nil {
		return simulateError(fs, err, stderr)
	}
	if *svg != "" {
		var buf bytes.Buffer
		if err := res.WriteSVG(&buf); err != nil {
			return simulateError(fs, fmt.Errorf("svg: %w", err), stderr)
		}
		if err := os.WriteFile(*svg, buf.Bytes(), 0o644); err != nil {
			return simulateError(fs, err, stderr)
		}
	}
	return simulateError(fs, res.WriteTable(stdout), stderr)
}

// simulateError returns the exit code of err (ExitOK if nil): a
// [*outage.FieldError] is a usage error naming the flag that set the field,
// any other error a failure.
func simulateError(fs *flag.FlagSet, err error, stderr io.Writer) int {
	var fe *outage.FieldError
	switch {
	case errors.As(err, &fe):
		return UsageError(stderr, fs.Name(), fmt.Sprintf("--%s %s", simulateFlags[fe.Field], flagNames(fe.Reason)))
	case err != nil:
		fmt.Fprintf(stderr, "%s: %v\n", fs.Name(), err)
		return ExitFailure
	}
	return ExitOK
}
