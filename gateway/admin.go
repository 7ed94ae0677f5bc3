package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/retry"
)

// The admin API of docs/GATEWAY.md §9.1 and §9.2: GET /admin/breakers lists
// every model breaker, GET /admin/breakers/{model} shows one, and POST
// /admin/breakers/{model} holds, releases, resets, disables or enables.

// breakersPath is the admin API's collection; a model's breaker is below it,
// a direct upstream/model name path-escaped (upstream%2Fmodel) or not.
const breakersPath = "/admin/breakers"

// BreakerView is one model breaker as the admin API shows it (docs/GATEWAY.md
// §9.1): its state, where it routes, why and until when it is open, the last
// failure this process saw, its counters and the thresholds in force, its
// chain, a hold in force and whether the state is shared. Times are RFC 3339.
type BreakerView struct {
	Model   string         `json:"model"`  // the model name, or upstream/model for a direct one
	Direct  bool           `json:"direct"` // an upstream/model addressed directly (no chain)
	Primary string         `json:"primary"`
	State   fallback.State `json:"state"`
	// Routed is the model the next request goes to; "" when none would
	// serve (the chain is spent, or a held model without a chain).
	Routed string `json:"routed_model"`
	// Since is when the breaker entered State (absent when this process has
	// seen no transition and the state has no time of its own).
	Since *time.Time `json:"since,omitempty"`
	// OpenUntil is when the cooldown ends (absent in Primary) and
	// OpenReason why it ends then: recovery_timeout, backoff (a repeated
	// trip's grown cooldown, SEMANTICS §9.1), hint, quota or manual.
	OpenUntil  *time.Time `json:"open_until,omitempty"`
	OpenReason string     `json:"open_reason,omitempty"`
	// Cooldown is the length of the cooldown in force (open_until − the
	// trip time, a Go duration such as "20s"; absent in Primary): with
	// breaker.recovery_backoff it grows with the trip count.
	Cooldown    string         `json:"cooldown,omitempty"`
	LastFailure *FailureView   `json:"last_failure,omitempty"`
	Counters    CountersView   `json:"counters"`
	Thresholds  ThresholdsView `json:"thresholds"`
	Chain       []EntryView    `json:"chain"` // [] for none
	Hold        *HoldView      `json:"hold,omitempty"`
	// Pools are the pool entries of the primary and chain, each with its
	// members (absent: none; docs/GATEWAY.md §11.5).
	Pools []PoolView `json:"pools,omitempty"`
	// Shared is true when the state lives in the store (--redis) and the
	// store answers.
	Shared bool `json:"shared"`
}

// FailureView is the last failure of a model breaker this process saw.
type FailureView struct {
	Model   string        `json:"model"` // the upstream/model that failed
	Kind    fallback.Kind `json:"kind"`  // transient, rate_limit or quota
	Status  int           `json:"status,omitempty"`
	Timeout bool          `json:"timeout,omitempty"`
	At      time.Time     `json:"at"`
}

// CountersView are a model breaker's counters.
type CountersView struct {
	ConsecutiveFailures int        `json:"consecutive_failures"`
	ProbeSuccesses      int        `json:"probe_successes"`
	ProbeInFlight       bool       `json:"probe_in_flight"`
	FallbackActivated   bool       `json:"fallback_activated"`
	TrippedAt           *time.Time `json:"tripped_at,omitempty"`
	// Trips is the trip count n of SEMANTICS §9.1: the openings in a row
	// that a failing primary caused (0 once the breaker has been closed
	// for max_recovery_timeout).
	Trips int `json:"trips"`
}

// ThresholdsView are the settings in force, defaults applied; durations as
// Go durations ("1m0s").
type ThresholdsView struct {
	TripThreshold     int    `json:"trip_threshold"`
	RecoveryTimeout   string `json:"recovery_timeout"`
	RecoverySuccesses int    `json:"recovery_successes"`
	MaxFailCount      int    `json:"max_fail_count"`
	ProbeTimeout      string `json:"probe_timeout"`
	QuotaCooldown     string `json:"quota_cooldown"`
	// The rules of SEMANTICS §8.1 and §8.2 in force (breaker.failure_rate,
	// slow_call_rate), absent while off, slow_call_after whenever set (alone
	// it fails a slow probe, §9.2), and the window's span and minimum
	// (defaults applied), absent while neither rule is on.
	FailureRate   float64 `json:"failure_rate,omitempty"`
	SlowCallAfter string  `json:"slow_call_after,omitempty"`
	SlowCallRate  float64 `json:"slow_call_rate,omitempty"`
	RateWindow    string  `json:"rate_window,omitempty"`
	RateMinCalls  int     `json:"rate_min_calls,omitempty"`
	// The backoff of SEMANTICS §9.1 (breaker.recovery_backoff, absent while
	// off) and max_recovery_timeout in force (default applied): the cap of
	// the grown cooldown and the trip count's reset window.
	RecoveryBackoff    float64 `json:"recovery_backoff,omitempty"`
	MaxRecoveryTimeout string  `json:"max_recovery_timeout"`
}

// EntryView is one chain entry: its strikes (failed turns since the last
// recovery or reset), whether it is failed, and a manual disable.
type EntryView struct {
	Model   string `json:"model"`
	Strikes int    `json:"strikes"`
	Failed  bool   `json:"failed"`
	// Disabled is true while the entry is out of routing by hand, until
	// DisabledUntil (absent: until enabled), with the reason and the admin
	// key's name given.
	Disabled       bool       `json:"disabled"`
	DisabledUntil  *time.Time `json:"disabled_until,omitempty"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
	DisabledBy     string     `json:"disabled_by,omitempty"`
}

// HoldView is a hold in force: who set it (the admin key's name), why and
// until when.
type HoldView struct {
	By     string    `json:"by,omitempty"`
	Reason string    `json:"reason,omitempty"`
	Until  time.Time `json:"until"`
}

// routeNotes is what a route's admin view adds to its breaker's snapshot:
// what this process saw.
type routeNotes struct {
	since atomic.Int64                // UnixNano of the last transition seen; 0: none
	last  atomic.Pointer[FailureView] // the last failure
	// actor is the admin key's name of the act in progress (nil: none):
	// the library's Enable and Reset take no reason, so their transitions
	// are signed with it here, as a hold's and a disable's reason are.
	actor atomic.Pointer[string]
	acts  sync.Mutex // one admin act at a time, so actor is that act's
}

// stamp signs t, a transition of an enable or a reset, with the admin key
// of the act in progress.
func (n *routeNotes) stamp(t fallback.Transition) fallback.Transition {
	if t.Reason != "" || (t.Manual != "enable" && t.Manual != "reset") {
		return t
	}
	if who := n.actor.Load(); who != nil {
		t.Reason = signed("", *who)
	}
	return t
}

// noteFailure records the last failure of rt: model failed with f, the
// upstream's status (0: none, e.g. a connection error).
func (rt *route) noteFailure(model string, f fallback.Failure, err error, now time.Time) {
	v := &FailureView{Model: model, Kind: f.Kind, Timeout: f.Timeout, At: now}
	if st, ok := errorStatus(err); ok {
		v.Status = st
	}
	rt.notes.last.Store(v)
}

// serveAdmin serves /admin/breakers and /admin/breakers/{model} behind the
// admin doors (adminAuthorized).
func (g *Gateway) serveAdmin(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, breakersPath)
	if !ok || name != "" && name[0] != '/' {
		notFound(w, r)
		return
	}
	name = strings.TrimPrefix(name, "/")
	who, ok := g.adminAuthorized(w, r)
	if !ok {
		return
	}
	switch {
	case r.Method == http.MethodPost && name != "":
		g.control(w, r, name, who)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		allow := http.MethodGet
		if name != "" {
			allow = "GET, POST"
		}
		methodNotAllowed(w, allow)
	case name == "":
		views := []BreakerView{}
		for _, lb := range g.LocalBreakers() {
			if rt := g.routeOf(lb.Name); rt != nil { // a direct route may be evicted meanwhile
				views = append(views, g.view(rt))
			}
		}
		writeJSON(w, http.StatusOK, struct {
			Breakers []BreakerView `json:"breakers"`
		}{views})
	default:
		rt := g.routeOf(name)
		if rt == nil {
			writeOpenAIError(w, http.StatusNotFound, apiError{Message: "no model breaker " + logName(name) + " (see GET /admin/breakers; a direct upstream/model breaker exists once used)", Type: "invalid_request_error", Code: "model_not_found"})
			return
		}
		writeJSON(w, http.StatusOK, g.view(rt))
	}
}

// routeOf returns the route of a configured model or of a direct name in
// use, or nil.
func (g *Gateway) routeOf(name string) *route {
	if rt := g.models[name]; rt != nil {
		return rt
	}
	g.direct.mu.RLock()
	defer g.direct.mu.RUnlock()
	return g.direct.routes[name]
}

// writeJSON writes v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeOpenAIError(w, http.StatusInternalServerError, apiError{Message: err.Error(), Type: "server_error"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// errorStatus returns the upstream's HTTP status in an attempt's error.
func errorStatus(err error) (int, bool) {
	var ue *upstreamError
	if errors.As(err, &ue) {
		return ue.status, true
	}
	var se *retry.StatusError
	if errors.As(err, &se) {
		return se.Code, true
	}
	return 0, false
}
