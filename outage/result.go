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

	// TripsOnRecovered counts trips dated after the fix (the breaker's last
	// failure when it tripped is after the end of the last outage): trips that
	// hold the breaker open on a service that has recovered. A timeout is dated
	// at its attempt's start (SEMANTICS section 1), so a trip caused by
	// attempts that hung since the outage is dated inside it.
	TripsOnRecovered int

	// ProbesCut counts probes cut at the end of their lease (each failed then).
	ProbesCut int

	// LateFailures counts failures of attempts other than the probe that arrived
	// while the breaker was open or half-open and restarted its cooldown (the next
	// probe became due later than it was): attempts that hung since before the
	// trip. A timeout dated inside the outage (SEMANTICS section 1) whose
	// cooldown has already passed restarts nothing, and is not counted.
	LateFailures int
	// ProbesDisplaced counts failures of attempts other than the probe that
	// arrived while a probe was in flight and re-opened the half-open breaker
	// (SEMANTICS section 1: any failure re-opens it), so that probe's verdict no
	// longer counted and the next call became a new probe.
	ProbesDisplaced int
	// RetriesRefused counts retries the breaker refused while half-open that
	// the ladder backed off and retried (a refused first attempt ends its call:
	// Refused; a retry refused by an open breaker ends its call: Failed).
	RetriesRefused int
	// StaleFailures counts failures the breaker ignored because a success of a call
	// that started later had already been counted (SEMANTICS section 1, stale
	// failures): attempts that hung since the outage and failed after newer calls
	// had proved the service healthy.
	StaleFailures int

	// Waiting is the callers' time lost waiting: attempts hanging on the dead service
	// (a probe at most until its lease ends) plus backoff waits (a healthy attempt's
	// latency is not counted).
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

// Probe is one probe of the breaker: when it was granted and how it ended.
type Probe struct {
	At, End time.Duration // granted at At, settled at End
	Failed  bool          // it failed (the service was down, or it was cut)
	Cut     bool          // it was cut at the end of its lease
}

// Outcome is one policy's run.
type Outcome struct {
	Policy  Policy
	Metrics Metrics
	Buckets []Bucket      // from the start of the run, Scenario.Bucket wide
	Band    []Segment     // the breaker's state over [0, End); WithBreaker only
	Probes  []Probe       // the breaker's probes, in order; WithBreaker only
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
	plain, br, err := runSides(s.Validate(), func(second bool) (Outcome, error) {
		if second {
			return run(ctx, s, WithBreaker)
		}
		return run(ctx, s, PlainRetries)
	})
	if err != nil {
		return nil, err
	}
	return &Result{Scenario: s, Plain: plain, Breaker: br}, nil
}

// runSides runs the two sides of a comparison in order, the first then the
// second, unless invalid (the scenario's validation) is not nil; it stops at
// the first error.
func runSides[T any](invalid error, side func(second bool) (T, error)) (first, second T, err error) {
	if invalid != nil {
		return first, second, invalid
	}
	if first, err = side(false); err != nil {
		return first, second, err
	}
	second, err = side(true)
	return first, second, err
}

// Header names the scenario in one line.
func (r *Result) Header() string { return "outage simulation: " + r.Scenario.String() }

// Winner names the policy that did better on one row of the comparison.
type Winner int

const (
	// NotCompared marks a row that describes a run rather than scores it (calls
	// made, probes sent, ...).
	NotCompared Winner = iota
	// Tie: both policies did equally well.
	Tie
	// PlainWins: plain retries did better.
	PlainWins
	// BreakerWins: the breaker did better.
	BreakerWins
)

// String returns "-", "tie", "plain retries" or "breaker".
func (w Winner) String() string {
	switch w {
	case NotCompared:
		return "-"
	case Tie:
		return "tie"
	case PlainWins:
		return PlainRetries.String()
	case BreakerWins:
		return WithBreaker.String()
	}
	return "Winner(" + strconv.Itoa(int(w)) + ")"
}

// Row is one line of the comparison table: a figure for each policy and who won.
type Row struct {
	Label          string // what the row measures, e.g. "calls failed"
	Plain, Breaker string // the figures, formatted
	Winner         Winner
}

// lower returns who won a row where less is better.
func lower[T int | time.Duration](a, b T) Winner {
	switch {
	case a < b:
		return PlainWins
	case b < a:
		return BreakerWins
	}
	return Tie
}

// sooner compares two times after the fix, where a negative one means never.
func sooner(a, b time.Duration) Winner {
	never := time.Duration(1<<63 - 1)
	if a < 0 {
		a = never
	}
	if b < 0 {
		b = never
	}
	return lower(a, b)
}

// Rows returns the comparison, row by row, in the order of [Result.WriteTable].
// Rows that score the policies (less time and fewer hung, failed or skipped calls
// win; more successful calls win) name a winner; the others are [NotCompared].
func (r *Result) Rows() []Row {
	a, b := r.Plain.Metrics, r.Breaker.Metrics
	var rows rowList
	num, add := rows.num, rows.add
	num("calls made", a.Calls, b.Calls, NotCompared)
	num("ticks skipped (caller still waiting)", a.Skipped, b.Skipped, lower(a.Skipped, b.Skipped))
	num("attempts that reached the service", a.Reached, b.Reached, NotCompared)
	num("attempts that reached the dead service", a.ReachedDead, b.ReachedDead, lower(a.ReachedDead, b.ReachedDead))
	add("caller time spent waiting (hang + backoff)", hours(a.Waiting), hours(b.Waiting), lower(a.Waiting, b.Waiting))
	num("calls refused instantly", a.Refused, b.Refused, NotCompared)
	num("probes sent", a.Probes, b.Probes, NotCompared)
	num("breaker trips", a.Trips, b.Trips, NotCompared)
	num("probes cut at their lease end", a.ProbesCut, b.ProbesCut, NotCompared)
	num("late failures that restarted the cooldown", a.LateFailures, b.LateFailures, NotCompared)
	num("probes displaced by a late failure", a.ProbesDisplaced, b.ProbesDisplaced, NotCompared)
	num("retries refused while probing (backed off)", a.RetriesRefused, b.RetriesRefused, NotCompared)
	num("stale failures the breaker ignored", a.StaleFailures, b.StaleFailures, NotCompared)
	num("calls succeeded", a.Succeeded, b.Succeeded, lower(b.Succeeded, a.Succeeded))
	num("calls failed", a.Failed, b.Failed, lower(a.Failed, b.Failed))
	num("attempts still hanging at the fix", a.HangingAtFix, b.HangingAtFix, lower(a.HangingAtFix, b.HangingAtFix))
	add("from the fix to the first success", since(a.FirstSuccess), since(b.FirstSuccess), sooner(a.FirstSuccess, b.FirstSuccess))
	add("from the fix to the breaker closed for good", "-", since(b.BreakerClosed), NotCompared)
	add("from the fix to the last hanging attempt's end", since(a.LastHang), since(b.LastHang), lower(a.LastHang, b.LastHang))
	add("from the fix to full traffic (no hang, no refusal)", since(a.FullFlow), since(b.FullFlow), sooner(a.FullFlow, b.FullFlow))
	return rows
}

// rowList collects the rows of a comparison table.
type rowList []Row

// add appends a row of figures already formatted.
func (rs *rowList) add(label, a, b string, w Winner) { *rs = append(*rs, Row{label, a, b, w}) }

// num appends a row of counts.
func (rs *rowList) num(label string, a, b int, w Winner) {
	rs.add(label, strconv.Itoa(a), strconv.Itoa(b), w)
}

// WriteTable writes the header and [Result.Rows] as an aligned text table: the
// figures of both policies side by side and the winner of each row.
func (r *Result) WriteTable(w io.Writer) error {
	var cells [][4]string
	for _, row := range r.Rows() {
		cells = append(cells, [4]string{row.Label, row.Plain, row.Breaker, row.Winner.String()})
	}
	return writeTable(w, r.Header(), PlainRetries.String(), WithBreaker.String(), cells)
}

// writeTable writes a comparison as an aligned text table: the header, a blank
// line, the two sides' names over their columns and a winner column, then the
// rows (label, the sides' figures, the winner).
func writeTable(w io.Writer, header, a, b string, rows [][4]string) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, header)
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "\t%s\t%s\twinner\n", a, b)
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", row[0], row[1], row[2], row[3])
	}
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
