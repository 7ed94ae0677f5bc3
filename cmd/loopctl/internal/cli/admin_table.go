package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loopctl/loopctl-go/gateway"
)

// writeAdmin prints an admin answer for people: a table of every breaker
// (list), or one breaker in detail.
func writeAdmin(w io.Writer, body []byte, list bool) error {
	if list {
		var all struct {
			Breakers []gateway.BreakerView `json:"breakers"`
		}
		if err := json.Unmarshal(body, &all); err != nil {
			return fmt.Errorf("the gateway's answer is not a breaker list: %v", err)
		}
		writeBreakerTable(w, all.Breakers, time.Now())
		return nil
	}
	var v gateway.BreakerView
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("the gateway's answer is not a breaker: %v", err)
	}
	writeBreaker(w, v, time.Now())
	return nil
}

// writeBreakerTable prints one line per breaker: model, state, routed
// model, until when it is open and why, the trip count and the cooldown in
// force (SEMANTICS §9.1), a hold, disabled entries.
func writeBreakerTable(w io.Writer, vs []gateway.BreakerView, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tSTATE\tROUTED\tOPEN UNTIL\tWHY\tTRIPS\tCOOLDOWN\tHOLD\tDISABLED\tSHARED")
	for _, v := range vs {
		var off []string
		for _, e := range v.Chain {
			if e.Disabled {
				off = append(off, e.Model)
			}
		}
		for _, p := range v.Pools {
			for _, m := range p.Members {
				if m.Disabled && !slices.Contains(off, m.Member+" (member)") { // two pools of one model may list it
					off = append(off, m.Member+" (member)")
				}
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", v.Model, v.State, orDash(v.Routed),
			until(v.OpenUntil, now), orDash(v.OpenReason), v.Counters.Trips, orDash(v.Cooldown), holdText(v.Hold),
			orDash(strings.Join(off, ",")), yesNo(v.Shared))
	}
	tw.Flush()
}

// writeBreaker prints one breaker in detail.
func writeBreaker(w io.Writer, v gateway.BreakerView, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	row := func(k, f string, a ...any) { fmt.Fprintf(tw, "%s\t"+f+"\n", append([]any{k}, a...)...) }
	row("model", "%s", v.Model)
	row("state", "%s (since %s)", v.State, stamp(v.Since))
	row("routed to", "%s", orDash(v.Routed))
	row("primary", "%s", v.Primary)
	if v.OpenUntil != nil {
		row("open until", "%s (%s)", until(v.OpenUntil, now), v.OpenReason)
	}
	if v.Hold != nil {
		row("hold", "%s", holdText(v.Hold))
	}
	if f := v.LastFailure; f != nil {
		status := ""
		if f.Status != 0 {
			status = fmt.Sprintf(" %d", f.Status)
		}
		row("last failure", "%s %s%s at %s", f.Model, f.Kind, status, f.At.Format(time.RFC3339))
	}
	c, t := v.Counters, v.Thresholds
	row("failures", "%d / %d (trip_threshold)", c.ConsecutiveFailures, t.TripThreshold)
	row("probes", "%d / %d (recovery_successes)%s", c.ProbeSuccesses, t.RecoverySuccesses, map[bool]string{true: ", a probe in flight"}[c.ProbeInFlight])
	row("cooldowns", "recovery_timeout %s, quota_cooldown %s, probe_timeout %s", t.RecoveryTimeout, t.QuotaCooldown, t.ProbeTimeout)
	row("trips", "%s", tripsText(v))
	if t.RateWindow != "" {
		row("window", "%s", windowText(t))
	}
	for _, e := range v.Chain {
		state := "ok"
		switch {
		case e.Disabled:
			state = "disabled " + disabledText(e, now)
		case e.Failed:
			state = "spent"
		}
		row("chain", "%s  strikes %d / %d  %s", e.Model, e.Strikes, t.MaxFailCount, state)
	}
	for _, p := range v.Pools {
		for _, m := range p.Members {
			row(p.Entry, "%s", memberText(m, now))
		}
	}
	row("shared", "%s", yesNo(v.Shared))
	tw.Flush()
}

// memberText is one pool member's line: "up/a ×2  open until …
// (recovery_timeout)  trips 1  stream 1.2s / whole -  in flight 3  share 40%",
// and a manual disable's reason and admin key.
func memberText(m gateway.MemberView, now time.Time) string {
	s := m.Member
	if m.Weight != 1 {
		s += fmt.Sprintf(" ×%g", m.Weight)
	}
	s += "  " + m.State.String()
	if m.OpenReason != "" {
		when := "until enabled"
		if m.OpenUntil != nil {
			when = "until " + until(m.OpenUntil, now)
		}
		s += ", out " + when + " (" + m.OpenReason + ")"
	}
	s += fmt.Sprintf("  trips %d  stream %s / whole %s  in flight %d  share %.0f%%", m.Trips,
		orDash(m.Latency.Stream), orDash(m.Latency.Whole), m.InFlight, 100*m.Share)
	if m.Disabled && (m.DisabledReason != "" || m.DisabledBy != "") {
		s += "  disabled"
		if m.DisabledReason != "" {
			s += ": " + m.DisabledReason
		}
		if m.DisabledBy != "" {
			s += " (by " + m.DisabledBy + ")"
		}
	}
	return s
}

// windowText describes the failure-rate window's rules in force
// (SEMANTICS §8.1, §8.2).
func windowText(t gateway.ThresholdsView) string {
	var rules []string
	if t.FailureRate > 0 {
		rules = append(rules, fmt.Sprintf("failure_rate %g", t.FailureRate))
	}
	if t.SlowCallRate > 0 {
		rules = append(rules, fmt.Sprintf("slow_call_rate %g after %s", t.SlowCallRate, t.SlowCallAfter))
	}
	return fmt.Sprintf("%s over %s (rate_min_calls %d)", strings.Join(rules, ", "), t.RateWindow, t.RateMinCalls)
}

// tripsText is the trip count with the cooldown in force and the backoff
// settings (SEMANTICS §9.1): "2, cooldown 20s (recovery_backoff 2, max_recovery_timeout 50s)".
func tripsText(v gateway.BreakerView) string {
	s := fmt.Sprint(v.Counters.Trips)
	if v.Cooldown != "" {
		s += ", cooldown " + v.Cooldown
	}
	backoff := "recovery_backoff off"
	if v.Thresholds.RecoveryBackoff > 1 {
		backoff = fmt.Sprintf("recovery_backoff %g", v.Thresholds.RecoveryBackoff)
	}
	if v.Thresholds.MaxRecoveryTimeout != "" {
		backoff += ", max_recovery_timeout " + v.Thresholds.MaxRecoveryTimeout
	}
	return s + " (" + backoff + ")"
}

func disabledText(e gateway.EntryView, now time.Time) string {
	s := "until enabled"
	if e.DisabledUntil != nil {
		s = "until " + until(e.DisabledUntil, now)
	}
	if e.DisabledReason != "" {
		s += ": " + e.DisabledReason
	}
	if e.DisabledBy != "" {
		s += " (by " + e.DisabledBy + ")"
	}
	return s
}

func holdText(h *gateway.HoldView) string {
	if h == nil {
		return "-"
	}
	s := "until " + h.Until.Format(time.RFC3339)
	if h.Reason != "" {
		s += ": " + h.Reason
	}
	if h.By != "" {
		s += " (by " + h.By + ")"
	}
	return s
}

// until is t with the time left ("2026-12-03T04:00:00Z, in 9m58s"), or "-".
func until(t *time.Time, now time.Time) string {
	if t == nil {
		return "-"
	}
	left := t.Sub(now).Round(time.Second)
	if left <= 0 {
		return t.Format(time.RFC3339) + ", passed"
	}
	return t.Format(time.RFC3339) + ", in " + left.String()
}

func stamp(t *time.Time) string {
	if t == nil {
		return "start"
	}
	return t.Format(time.RFC3339)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
