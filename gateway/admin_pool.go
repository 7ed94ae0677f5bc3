package gateway

import (
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/dashboard"
	"github.com/loopctl/loopctl-go/pool"
)

// The admin view of a model's pool entries (docs/GATEWAY.md §11.5): each
// member's breaker, what this process measures of its deployment, and a
// manual disable. Built with pure reads (pool.Pool.Status, the disable
// set): a GET changes nothing and takes no probe.

// PoolView is one pool entry of a model's primary or chain, with its
// members in config order.
type PoolView struct {
	Entry   string       `json:"entry"` // pool/<name>
	Members []MemberView `json:"members"`
}

// MemberView is one pool member as this process sees it. Its breaker is
// the deployment's (every pool that lists the deployment shares it), and
// so are its figures; Share alone is the pool's.
type MemberView struct {
	Member string        `json:"member"` // upstream/model
	Weight float64       `json:"weight"`
	State  breaker.State `json:"state"` // the member breaker's: closed, open, half-open
	// OpenUntil is when the member may be admitted again and OpenReason why
	// it ends then: while its breaker is open the cooldown's end and cause
	// (recovery_timeout, backoff, hint, quota); while it is disabled by
	// hand manual, with the disable's end (absent: until enabled) or the
	// breaker's if that is later.
	OpenUntil  *time.Time `json:"open_until,omitempty"`
	OpenReason string     `json:"open_reason,omitempty"`
	// Trips is the member breaker's trip count n (SEMANTICS §9.1), and
	// ConsecutiveFailures its failures since the last success.
	Trips               int  `json:"trips"`
	ConsecutiveFailures int  `json:"consecutive_failures"`
	ProbeInFlight       bool `json:"probe_in_flight"`
	// Latency holds the two latency estimates (time to first content).
	Latency LatencyView `json:"latency"`
	// InFlight counts the deployment's attempts in flight in this process.
	InFlight int `json:"in_flight"`
	// Headroom is what the member's answers said is left, less what
	// started since, per kind (SEMANTICS §9.3 rule 5).
	Headroom HeadroomView `json:"headroom"`
	// LastMinute counts the attempts this process started on the
	// deployment over the last minute, and Share is its part of the pool's
	// members' counts (0 with none).
	LastMinute int     `json:"last_minute"`
	Share      float64 `json:"share"`
	// Disabled is true while the member is out of rotation by hand, until
	// DisabledUntil (absent: until enabled), with the reason and the admin
	// key's name given.
	Disabled       bool       `json:"disabled"`
	DisabledUntil  *time.Time `json:"disabled_until,omitempty"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
	DisabledBy     string     `json:"disabled_by,omitempty"`
}

// LatencyView holds a member's latency estimates as Go durations ("1.2s"):
// Stream for streamed answers, Whole for whole ones; each absent without a
// recent sample of its kind.
type LatencyView struct {
	Stream string `json:"stream,omitempty"`
	Whole  string `json:"whole,omitempty"`
}

// HeadroomView is a member's headroom, each kind absent while unknown: the
// request limit, the token limit (whole input), Anthropic's input-token
// (uncached input) and output-token limits.
type HeadroomView struct {
	Requests     *LimitView `json:"requests,omitempty"`
	Tokens       *LimitView `json:"tokens,omitempty"`
	InputTokens  *LimitView `json:"input_tokens,omitempty"`
	OutputTokens *LimitView `json:"output_tokens,omitempty"`
}

// LimitView is one headroom figure: what is left (the latest answer's
// remaining figure less what started since) and when the limit resets.
type LimitView struct {
	Remaining int64     `json:"remaining"`
	Reset     time.Time `json:"reset"`
}

// poolViews returns the views of the pools rt's route names, in route
// order (nil: none).
func (g *Gateway) poolViews(rt *route) []PoolView {
	if rt.direct {
		return nil
	}
	var out []PoolView
	now := g.now()
	for _, pd := range g.poolsOf(rt.name) {
		pv := PoolView{Entry: pd.entry, Members: make([]MemberView, 0, len(pd.members))}
		for i := range pd.members {
			pv.Members = append(pv.Members, g.memberView(pd, i, now))
		}
		out = append(out, pv)
	}
	return out
}

// memberView is the view of member i of pd at now.
func (g *Gateway) memberView(pd *pooled, i int, now time.Time) MemberView {
	st := pd.p.Status(now, i)
	snap := st.Breaker
	v := MemberView{
		Member: st.Name, Weight: st.Weight, State: snap.State,
		Trips: snap.Trips, ConsecutiveFailures: snap.ConsecutiveFailures,
		ProbeInFlight: !snap.ProbeStartedAt.IsZero(),
		Latency:       LatencyView{Stream: durationOrEmpty(st.Stream), Whole: durationOrEmpty(st.Whole)},
		InFlight:      st.InFlight,
		Headroom: HeadroomView{Requests: limitView(st.Headroom.Requests), Tokens: limitView(st.Headroom.Tokens),
			InputTokens: limitView(st.Headroom.InputTokens), OutputTokens: limitView(st.Headroom.OutputTokens)},
		LastMinute: st.LastMinute, Share: st.Share,
	}
	if snap.State == breaker.Open && !snap.OpenUntil.IsZero() {
		v.OpenUntil, v.OpenReason = timeOrNil(snap.OpenUntil), snap.Cause.String()
	}
	if d, ok := g.pools.off.lookup(st.Name, now); ok {
		v.Disabled, v.DisabledUntil, v.DisabledReason, v.DisabledBy = true, timeOrNil(d.until), d.reason, d.by
		v.OpenReason, v.OpenUntil = breaker.CauseManual.String(), timeOrNil(d.until)
		if !d.until.IsZero() && snap.State == breaker.Open && snap.OpenUntil.After(d.until) {
			v.OpenUntil = timeOrNil(snap.OpenUntil)
		}
	}
	return v
}

// limitView is the view of l, nil while unknown (no reset).
func limitView(l pool.Limit) *LimitView {
	if l.Reset.IsZero() {
		return nil
	}
	return &LimitView{Remaining: l.Remaining, Reset: l.Reset}
}

// durationOrEmpty is d as a Go duration, "" for zero.
func durationOrEmpty(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// memberOf returns the pool of rt's route that lists the deployment ref,
// and the member's index in it (nil, -1: none).
func (g *Gateway) memberOf(model, ref string) (*pooled, int) {
	for _, pd := range g.poolsOf(model) {
		if i := pd.index(ref); i >= 0 {
			return pd, i
		}
	}
	return nil, -1
}

// index returns the index of the member ref in pd (-1: not a member).
func (pd *pooled) index(ref string) int {
	for i, m := range pd.members {
		if m.ref == ref {
			return i
		}
	}
	return -1
}

// dashboardPools are the dashboard's rows of the pools of the configured
// model named model (nil: none), from the same reads as the admin view.
func (g *Gateway) dashboardPools(model string) []dashboard.PoolState {
	rt := g.models[model]
	if rt == nil {
		return nil
	}
	var out []dashboard.PoolState
	for _, pv := range g.poolViews(rt) {
		ps := dashboard.PoolState{Entry: pv.Entry, Members: make([]dashboard.MemberState, 0, len(pv.Members))}
		for _, m := range pv.Members {
			ps.Members = append(ps.Members, dashboard.MemberState{Name: m.Member, Weight: m.Weight, State: m.State,
				OpenUntil: m.OpenUntil, OpenReason: m.OpenReason, Disabled: m.Disabled,
				DisabledReason: signed(m.DisabledReason, m.DisabledBy), Trips: m.Trips,
				Stream: m.Latency.Stream, Whole: m.Latency.Whole, InFlight: m.InFlight, Share: m.Share})
		}
		out = append(out, ps)
	}
	return out
}
