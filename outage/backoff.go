package outage

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"
)

// LongBrownout returns issue 34's long brownout: 40 callers every 2 s (20
// calls/s), healthy for 30 s, failing 3 calls in 10 (never two in a row) for
// 3 minutes, healthy for 1 minute; the breaker of bench/outage (3 failures, a
// 5 s cooldown, the failure-rate window 0.25 over 10 s with at least 20
// calls, slow calls from 1 s at a rate of 0.5) and, on the backoff's side,
// RecoveryBackoff 2 up to 50 s (the default 10 × the cooldown); the ladder's
// defaults; seed 1.
func LongBrownout() BrownoutScenario {
	s := DefaultBrownout(Failing)
	s.Sick, s.Cooldown = 3*time.Minute, 5*time.Second
	s.RecoveryBackoff = 2
	return s
}

// BackoffResult compares, on one brownout, the breaker with the failure-rate
// window and the slow-call rule without and with the backoff of repeated
// trips (SEMANTICS §9.1): every recovery of a brownout closes into an empty
// window that needs RateMinCalls more calls to trip again, and the backoff
// makes each such re-trip wait longer.
type BackoffResult struct {
	Scenario      BrownoutScenario
	Without, With BrownoutMetrics
}

// The sides' names of a BackoffResult, as its columns and winners say them.
const (
	WithoutBackoff = "without backoff"
	WithBackoff    = "with backoff"
)

// SimulateBackoff runs s's rate-window breaker without and with
// s.RecoveryBackoff. It returns a [*FieldError] if s is invalid or its
// RecoveryBackoff is not above 1 (nothing to compare), and ctx.Err() if ctx
// ends first; the result is a pure function of s.
func SimulateBackoff(ctx context.Context, s BrownoutScenario) (*BackoffResult, error) {
	invalid := s.Validate()
	if invalid == nil && s.RecoveryBackoff <= 1 {
		invalid = &FieldError{"RecoveryBackoff", "must be above 1 to compare the breaker with and without it (got " +
			strconv.FormatFloat(s.RecoveryBackoff, 'g', -1, 64) + ")"}
	}
	a, b, err := runSides(invalid, func(on bool) (BrownoutMetrics, error) {
		bs := s.settings(true)
		if on {
			bs = s.withBackoff()
		}
		return runBrownout(ctx, s, bs)
	})
	if err != nil {
		return nil, err
	}
	return &BackoffResult{Scenario: s, Without: a, With: b}, nil
}

// backoffWinner names w as the backoff table's rows do.
func backoffWinner(w Winner) string {
	switch w {
	case PlainWins:
		return WithoutBackoff
	case BreakerWins:
		return WithBackoff
	}
	return w.String()
}

// share formats part/whole as a percentage with one decimal ("9.5 %").
func share(part, whole int) string {
	if whole == 0 {
		return "-"
	}
	return strconv.FormatFloat(100*float64(part)/float64(whole), 'f', 1, 64) + " %"
}

// Rows returns the comparison row by row, in the order of WriteTable: the
// brownout's rows, then the share of the calls made while sick that reached
// the service, and the re-trips from half-open.
func (r *BackoffResult) Rows() []BrownoutRow {
	a, b := r.Without, r.With
	rows := brownRows(a, b)
	rows.add("share of the calls made while sick that reached it", share(a.SickAttempts, a.SickCalls),
		share(b.SickAttempts, b.SickCalls), lower(a.SickAttempts*b.SickCalls, b.SickAttempts*a.SickCalls))
	rows.num("re-trips from half-open (failed, slow or lapsed probes)", a.Retrips, b.Retrips, NotCompared)
	out := make([]BrownoutRow, len(rows))
	for i, row := range rows {
		out[i] = BrownoutRow{row.Label, row.Plain, row.Breaker, backoffWinner(row.Winner)}
	}
	return out
}

// Header names the comparison in one line, after the brownout's.
func (r *BackoffResult) Header() string {
	s := r.Scenario
	cap := s.MaxRecoveryTimeout
	if cap == 0 {
		cap = 10 * s.Cooldown
	}
	return (&BrownoutResult{Scenario: s}).Header() +
		fmt.Sprintf("\nbackoff: the rate window's breaker, its cooldown × %g per repeated trip up to %v, against the same without it", s.RecoveryBackoff, cap)
}

// WriteTable writes the header and the rows as an aligned text table.
func (r *BackoffResult) WriteTable(w io.Writer) error {
	var cells [][4]string
	for _, row := range r.Rows() {
		cells = append(cells, [4]string{row.Label, row.Consecutive, row.Window, row.Winner})
	}
	return writeTable(w, r.Header(), WithoutBackoff, WithBackoff, cells)
}
