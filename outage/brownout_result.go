package outage

import (
	"context"
	"fmt"
	"io"
)

// BrownoutResult is the comparison of the two breakers on one brownout.
type BrownoutResult struct {
	Scenario    BrownoutScenario
	Consecutive BrownoutMetrics // FailureThreshold alone
	Window      BrownoutMetrics // with the failure-rate window and the slow-call rule
}

// SimulateBrownout runs s with both breakers. It returns a [*FieldError] if s
// is invalid and ctx.Err() if ctx ends first; the result is a pure function
// of s.
func SimulateBrownout(ctx context.Context, s BrownoutScenario) (*BrownoutResult, error) {
	c, w, err := runSides(s.Validate(), func(window bool) (BrownoutMetrics, error) {
		return runBrownout(ctx, s, s.settings(window))
	})
	if err != nil {
		return nil, err
	}
	return &BrownoutResult{Scenario: s, Consecutive: c, Window: w}, nil
}

// The sides' names, as the table's columns and winners say them.
const (
	ConsecutiveOnly = "consecutive only"
	RateWindow      = "rate window"
)

// BrownoutRow is one line of the comparison: a figure per breaker and who
// did better (ConsecutiveOnly, RateWindow, "tie", or "-" for a row that
// describes rather than scores).
type BrownoutRow struct {
	Label               string
	Consecutive, Window string
	Winner              string
}

// brownWinner names w as the brownout's rows do: a side, "tie" or "-".
func brownWinner(w Winner) string {
	switch w {
	case PlainWins:
		return ConsecutiveOnly
	case BreakerWins:
		return RateWindow
	}
	return w.String()
}

// Rows returns the comparison row by row, in the order of WriteTable. Less is
// better on the rows that score (a negative duration, "never", is worst).
func (r *BrownoutResult) Rows() []BrownoutRow {
	rows := brownRows(r.Consecutive, r.Window)
	out := make([]BrownoutRow, len(rows))
	for i, row := range rows {
		out[i] = BrownoutRow{row.Label, row.Plain, row.Breaker, brownWinner(row.Winner)}
	}
	return out
}

// brownRows returns the rows that compare two sides of a brownout, a and b.
func brownRows(a, b BrownoutMetrics) rowList {
	var rows rowList
	num, add := rows.num, rows.add
	num("calls made", a.Calls, b.Calls, NotCompared)
	num("calls served by the service", a.Served, b.Served, NotCompared)
	num("calls served by the backup (refused)", a.Backup, b.Backup, NotCompared)
	num("calls failed", a.Failed, b.Failed, lower(a.Failed, b.Failed))
	num("attempts that reached the sick service", a.SickAttempts, b.SickAttempts, lower(a.SickAttempts, b.SickAttempts))
	num("attempts that failed there", a.SickFailures, b.SickFailures, lower(a.SickFailures, b.SickFailures))
	num("attempts answered slowly there", a.Slow, b.Slow, lower(a.Slow, b.Slow))
	num("same-service retries", a.Retries, b.Retries, lower(a.Retries, b.Retries))
	add("caller time lost (failures, backoff, slowness)", hours(a.Waiting), hours(b.Waiting), sooner(a.Waiting, b.Waiting))
	add("call latency p50 while sick", since(a.P50), since(b.P50), sooner(a.P50, b.P50))
	add("call latency p99 while sick", since(a.P99), since(b.P99), sooner(a.P99, b.P99))
	num("breaker trips", a.Trips, b.Trips, NotCompared)
	num("probes sent", a.Probes, b.Probes, NotCompared)
	add("from the start of the sickness to the first trip", since(a.FirstTrip), since(b.FirstTrip), NotCompared)
	add("from the fix to the breaker closed for good", since(a.Closed), since(b.Closed), sooner(a.Closed, b.Closed))
	return rows
}

// Header names the brownout in one line.
func (r *BrownoutResult) Header() string {
	s := r.Scenario
	sick := "failing 3 calls in 10, never 2 in a row"
	if s.Sickness == Slow {
		sick = "answering every call after " + s.SlowLatency.String()
	}
	return fmt.Sprintf("brownout simulation: %d callers calling every %v; service %s from %v to %v, else %v answers; "+
		"refused calls served by a backup in %v; %d retries (%v base, %v max); seed %d\n"+
		"breakers: %d failures, %v cooldown, %v lease; %s adds failure rate %g over %v (at least %d calls), slow calls from %v at a rate of %g",
		s.Callers, s.Interval, sick, s.Warmup, s.fix(), s.Latency, s.BackupLatency, s.Retries, s.RetryBase, s.RetryMax, s.Seed,
		s.FailureThreshold, s.Cooldown, s.ProbeTimeout, RateWindow, s.FailureRate, s.RateWindow, s.RateMinCalls, s.SlowCallAfter, s.SlowCallRate)
}

// WriteTable writes the header and the rows as an aligned text table.
func (r *BrownoutResult) WriteTable(w io.Writer) error {
	var cells [][4]string
	for _, row := range r.Rows() {
		cells = append(cells, [4]string{row.Label, row.Consecutive, row.Window, row.Winner})
	}
	return writeTable(w, r.Header(), ConsecutiveOnly, RateWindow, cells)
}
