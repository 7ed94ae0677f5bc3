package outage

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// Policy is how callers treat the service.
type Policy int

const (
	// PlainRetries sends every call through the retry ladder alone.
	PlainRetries Policy = iota
	// WithBreaker puts one shared tool breaker in front of every attempt.
	WithBreaker
)

// String returns "plain retries" or "breaker".
func (p Policy) String() string {
	switch p {
	case PlainRetries:
		return "plain retries"
	case WithBreaker:
		return "breaker"
	}
	return "Policy(" + strconv.Itoa(int(p)) + ")"
}

// Metrics are one policy's measured figures. Calls = Succeeded + Failed + Refused.
type Metrics struct {
	Calls     int // calls started (one per tick at which the caller was free)
	Skipped   int // ticks skipped because the caller was still waiting on its call
	Succeeded int // calls that ended with a successful attempt
	Failed    int // calls that ended with a failure: ladder spent, or a retry refused
	Refused   int // calls refused instantly by the breaker (their first attempt)

	Reached     int // attempts that reached the service
	ReachedDead int // attempts that reached the dead service (each hung for the timeout)
	Probes      int // permits that held the breaker's probe slot
	Trips       int // breaker transitions from Closed to Open

	// LateFailures counts failures that arrived while the breaker was open, or
	// half-open with another attempt holding the probe: attempts that hung since
	// before the trip and probes whose lease had expired. Each restarted the cooldown.
	LateFailures int

	// Waiting is the callers' time lost waiting: attempts hanging on the dead service
	// plus backoff waits (a healthy attempt's latency is not counted).
	Waiting time.Duration

	// HangingAtFix counts attempts that were hanging on the dead service at the fix.
	HangingAtFix int
	// LastHang is the time from the fix until the last attempt that hung on the dead
	// service failed: the backlog of hanging attempts drained (0 if before the fix).
	LastHang time.Duration

	// FirstSuccess is the time from the fix until the first attempt succeeded; -1 if
	// none did.
	FirstSuccess time.Duration
	// FullFlow is the time from the fix until traffic flowed fully again: the last
	// failed attempt or refusal, after which no caller was hanging on the dead service
	// and every attempt reached the service and succeeded (0 if that was before the
	// fix); -1 if the run ended before it did (Recovered is false).
	FullFlow  time.Duration
	Recovered bool
	// BreakerClosed is the time from the fix until the breaker closed for good
	// (0 if it was closed at the fix); -1 without a breaker or if it ended the run open.
	BreakerClosed time.Duration
}

// Bucket counts the attempts of one time bucket, by the instant they were made.
type Bucket struct {
	Start   time.Duration // offset of the bucket from the start of the run
	Healthy int           // attempts that reached the healthy service
	Dead    int           // attempts that reached the dead service
	Refused int           // attempts the breaker refused
}

// Segment is a stretch of time during which the breaker was in State. Segments are
// contiguous; one may be empty (From == To) when two transitions share an instant.
type Segment struct {
	From, To time.Duration
	State    breaker.State
}

// Outcome is one policy's run.
type Outcome struct {
	Policy  Policy
	Metrics Metrics
	Buckets []Bucket      // from the start of the run, Scenario.Bucket wide
	Band    []Segment     // the breaker's state over [0, End); WithBreaker only
	End     time.Duration // when the last call ended (at least the scheduled window)
}

// Result is the comparison of both policies on one scenario.
type Result struct {
	Scenario Scenario
	Plain    Outcome
	Breaker  Outcome
}

// Simulate runs s under both policies. It returns a [*FieldError] if s is invalid and
// ctx.Err() if ctx ends first. The result is a pure function of s.
func Simulate(ctx context.Context, s Scenario) (*Result, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	plain, err := run(ctx, s, PlainRetries)
	if err != nil {
		return nil, err
	}
	br, err := run(ctx, s, WithBreaker)
	if err != nil {
		return nil, err
	}
	return &Result{Scenario: s, Plain: plain, Breaker: br}, nil
}

// Header names the scenario in one line.
func (r *Result) Header() string { return "outage simulation: " + r.Scenario.String() }

// WriteTable writes the header and the metrics of both policies side by side as an
// aligned text table.
func (r *Result) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, r.Header())
	fmt.Fprintln(tw)
	a, b := r.Plain.Metrics, r.Breaker.Metrics
	row := func(label, va, vb string) { fmt.Fprintf(tw, "%s\t%s\t%s\n", label, va, vb) }
	num := func(label string, va, vb int) { row(label, strconv.Itoa(va), strconv.Itoa(vb)) }
	row("", PlainRetries.String(), WithBreaker.String())
	num("calls made", a.Calls, b.Calls)
	num("ticks skipped (caller still waiting)", a.Skipped, b.Skipped)
	num("attempts that reached the service", a.Reached, b.Reached)
	num("attempts that reached the dead service", a.ReachedDead, b.ReachedDead)
	row("caller time spent waiting (hang + backoff)", hours(a.Waiting), hours(b.Waiting))
	num("calls refused instantly", a.Refused, b.Refused)
	num("probes sent", a.Probes, b.Probes)
	num("breaker trips", a.Trips, b.Trips)
	num("late failures that restarted the cooldown", a.LateFailures, b.LateFailures)
	num("calls succeeded", a.Succeeded, b.Succeeded)
	num("calls failed", a.Failed, b.Failed)
	num("attempts still hanging at the fix", a.HangingAtFix, b.HangingAtFix)
	row("from the fix to the first success", since(a.FirstSuccess), since(b.FirstSuccess))
	row("from the fix to the breaker closed for good", "-", since(b.BreakerClosed))
	row("from the fix to the last hanging attempt's end", since(a.LastHang), since(b.LastHang))
	row("from the fix to full traffic (no hang, no refusal)", since(a.FullFlow), since(b.FullFlow))
	return tw.Flush()
}

// hours formats a long total like 10h02m13s.
func hours(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second
	if h > 0 {
		return fmt.Sprintf("%dh%02dm%02ds", h, m, s)
	}
	if m > 0 {
		return fmt.Sprintf("%dm%02ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// since formats a time after the fix to the millisecond; negative means "never".
func since(d time.Duration) string {
	if d < 0 {
		return "not within the run"
	}
	return d.Round(time.Millisecond).String()
}
