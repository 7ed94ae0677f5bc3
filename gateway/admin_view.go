package gateway

import (
	"strings"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/internal/ratewindow"
	"github.com/prometheus/client_golang/prometheus"
)

// view builds rt's BreakerView with pure reads of its breaker.
func (g *Gateway) view(rt *route) BreakerView {
	s := rt.settings
	snap := rt.mgr.Snapshot()
	v := BreakerView{
		Model: rt.name, Direct: rt.direct, Primary: s.Primary, State: snap.State,
		Routed:      rt.mgr.ActiveModel(),
		LastFailure: rt.notes.last.Load(),
		Counters: CountersView{
			ConsecutiveFailures: snap.ConsecutiveFailures, ProbeSuccesses: snap.ProbeSuccesses,
			ProbeInFlight: !snap.ProbeStartedAt.IsZero(), FallbackActivated: snap.FallbackActivated,
			TrippedAt: timeOrNil(snap.TrippedAt), Trips: snap.Trips,
		},
		Thresholds: thresholds(s),
		Chain:      []EntryView{},
		Shared:     g.shared(rt),
		Pools:      g.poolViews(rt),
	}
	if snap.State != fallback.Primary && !snap.CooldownEnds.IsZero() {
		v.OpenUntil = timeOrNil(snap.CooldownEnds)
		v.OpenReason = snap.CooldownCause.String()
		if !snap.TrippedAt.IsZero() {
			v.Cooldown = snap.CooldownEnds.Sub(snap.TrippedAt).String()
		}
	}
	v.Since = since(rt, snap)
	if !snap.HoldUntil.IsZero() {
		reason, who := unsign(snap.HoldReason)
		v.Hold = &HoldView{By: who, Reason: reason, Until: snap.HoldUntil}
	}
	for _, e := range snap.Chain {
		ev := EntryView{Model: e.Model, Strikes: e.Attempts, Failed: e.Failed, Disabled: !e.Available,
			DisabledUntil: timeOrNil(e.DisabledUntil)}
		ev.DisabledReason, ev.DisabledBy = unsign(e.DisabledReason)
		v.Chain = append(v.Chain, ev)
	}
	return v
}

// since is when rt's breaker entered the state of snap: the trip for
// Fallback, the cooldown's end for Recovering, else the last transition
// this process saw (nil: none).
func since(rt *route, snap fallback.Snapshot) *time.Time {
	switch {
	case snap.State == fallback.Fallback && !snap.TrippedAt.IsZero():
		return timeOrNil(snap.TrippedAt)
	case snap.State == fallback.Recovering && !snap.CooldownEnds.IsZero():
		return timeOrNil(snap.CooldownEnds)
	}
	if ns := rt.notes.since.Load(); ns != 0 {
		t := time.Unix(0, ns)
		return &t
	}
	return nil
}

// thresholds are s's thresholds with the defaults applied.
func thresholds(s fallback.Settings) ThresholdsView {
	t := ThresholdsView{
		TripThreshold:     int(orDefault(int64(s.TripThreshold), fallback.DefaultTripThreshold)),
		RecoveryTimeout:   orDefault(s.RecoveryTimeout, fallback.DefaultRecoveryTimeout).String(),
		RecoverySuccesses: int(orDefault(int64(s.RecoverySuccessesNeeded), fallback.DefaultRecoverySuccessesNeeded)),
		MaxFailCount:      int(orDefault(int64(s.MaxFailCount), fallback.DefaultMaxFailCount)),
		ProbeTimeout:      orDefault(s.ProbeTimeout, fallback.DefaultProbeTimeout).String(),
		QuotaCooldown:     max(orDefault(s.QuotaCooldown, fallback.DefaultQuotaCooldown), orDefault(s.RecoveryTimeout, fallback.DefaultRecoveryTimeout)).String(),
		FailureRate:       s.FailureRate,
	}
	rec := orDefault(s.RecoveryTimeout, fallback.DefaultRecoveryTimeout)
	if s.RecoveryBackoff > 1 {
		t.RecoveryBackoff = s.RecoveryBackoff
	}
	t.MaxRecoveryTimeout = orDefault(s.MaxRecoveryTimeout, 10*rec).String()
	if s.SlowCallAfter > 0 { // alone it still fails a slow probe (SEMANTICS §9.2)
		t.SlowCallAfter = s.SlowCallAfter.String()
	}
	if s.SlowCallAfter > 0 && s.SlowCallRate > 0 { // either zero: the rate is off (SEMANTICS §8.2)
		t.SlowCallRate = s.SlowCallRate
	}
	if t.FailureRate > 0 || t.SlowCallRate > 0 {
		t.RateWindow = orDefault(s.RateWindow, ratewindow.DefaultSpan).String()
		t.RateMinCalls = int(orDefault(int64(s.RateMinCalls), ratewindow.DefaultMinCalls))
	}
	return t
}

// shared reports whether rt's state lives in the store now: it has a
// Backend, and the store answers (Options.StoreMode says "store: shared").
func (g *Gateway) shared(rt *route) bool {
	if rt.settings.Backend == nil {
		return false
	}
	return g.opt.StoreMode == nil || strings.HasPrefix(g.opt.StoreMode(), "store: shared")
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// openUntil is the collector of loopctl_model_open_until_seconds: for every
// model breaker that is not in Primary, when its cooldown ends (Unix time).
type openUntil struct{ g *Gateway }

const openUntilHelp = "When the cooldown of a model breaker that is not closed ends (Unix time; absent while closed): a probe may go to the primary then."

var openUntilDesc = prometheus.NewDesc("loopctl_model_open_until_seconds", openUntilHelp, []string{"model"}, nil)

func (c openUntil) Describe(ch chan<- *prometheus.Desc) { ch <- openUntilDesc }

func (c openUntil) Collect(ch chan<- prometheus.Metric) {
	g := c.g
	for n := g.next.Load(); n != nil; n = g.next.Load() {
		g = n // the gateway of the configuration in force (Reload)
	}
	for _, lb := range g.LocalBreakers() {
		if lb.Manager.State() == fallback.Primary {
			continue
		}
		snap := lb.Manager.Snapshot()
		if snap.State == fallback.Primary || snap.CooldownEnds.IsZero() {
			continue
		}
		ch <- prometheus.MustNewConstMetric(openUntilDesc, prometheus.GaugeValue,
			float64(snap.CooldownEnds.UnixNano())/1e9, lb.Name)
	}
}
