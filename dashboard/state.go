package dashboard

import (
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"
)

// Model is a model breaker to show.
type Model struct {
	// Name names it on the page (the gateway's model name, or the primary).
	Name string
	// Manager is the model breaker. Only its pure reads are used.
	Manager *fallback.Manager
	// Settings are the ones Manager was built with: they give the cooldown
	// left, the chain budgets and the probes needed (zero fields: defaults;
	// Now, if set, is the clock for the cooldown).
	Settings fallback.Settings
	// Pools are the pool entries of its primary and chain, with their
	// members as the program read them for this poll (the gateway: from
	// its pools' pure reads). The page draws a row per member.
	Pools []PoolState
}

// PoolState is one pool entry of a model: pool/<name> and its members.
type PoolState struct {
	Entry   string        `json:"entry"`
	Members []MemberState `json:"members"`
}

// MemberState is one pool member's row.
type MemberState struct {
	Name   string        `json:"name"` // upstream/model
	Weight float64       `json:"weight"`
	State  breaker.State `json:"state"` // its member breaker's
	// OpenUntil is when it may be admitted again and OpenReason why then:
	// recovery_timeout, backoff, hint, quota, or manual while it is
	// disabled by hand (Disabled).
	OpenUntil  *time.Time `json:"open_until,omitempty"`
	OpenReason string     `json:"open_reason,omitempty"`
	Disabled   bool       `json:"disabled"`
	// DisabledReason is the reason a disable by hand gave, with the admin
	// key's name as the gateway stores it.
	DisabledReason string `json:"disabled_reason,omitempty"`
	Trips          int    `json:"trips"`
	// Stream and Whole are the latency estimates (Go durations; "" without
	// a recent sample), InFlight its attempts in flight and Share its part
	// of the pool's last minute of requests.
	Stream   string  `json:"stream,omitempty"`
	Whole    string  `json:"whole,omitempty"`
	InFlight int     `json:"in_flight"`
	Share    float64 `json:"share"`
}

// ToolSet is a group of tool breakers to show.
type ToolSet struct {
	// Name names the group on the page (e.g. "agent", or an MCP server).
	Name string
	// Registry holds the tool breakers. Only its pure reads are used.
	Registry *health.Registry
}

// Sources is what the page shows, as returned by a [Source].
type Sources struct {
	Models []Model
	Tools  []ToolSet
}

// Source returns the breakers to show; it is called on every poll, so the
// set may change while the page is open. It must be safe for concurrent use.
type Source func() Sources

// State is the JSON document the page polls ("/state.json").
type State struct {
	Now         time.Time    `json:"now"`
	Models      []ModelState `json:"models"`
	Tools       []ToolState  `json:"tools"`
	Transitions []Transition `json:"transitions"`
}

// ModelState is one model breaker in a [State].
type ModelState struct {
	Name         string         `json:"name"`
	Primary      string         `json:"primary"`
	State        fallback.State `json:"state"`
	ActiveModel  string         `json:"active_model"`            // "" when the chain is spent
	CooldownLeft string         `json:"cooldown_left,omitempty"` // Fallback: until the next probe ("0s": due)
	// OpenUntil is when the cooldown ends (absent in Primary) and OpenReason
	// why then: recovery_timeout, backoff (a repeated trip's grown
	// cooldown), hint, quota or manual (a hold), as the gateway's GET
	// /admin/breakers says.
	OpenUntil  *time.Time `json:"open_until,omitempty"`
	OpenReason string     `json:"open_reason,omitempty"`
	// Trips is the trip count n of SEMANTICS §9.1 and Cooldown the length of
	// the cooldown in force (absent in Primary), which grows with n under
	// RecoveryBackoff.
	Trips    int    `json:"trips"`
	Cooldown string `json:"cooldown,omitempty"`
	// HoldUntil and HoldReason describe an operator's hold in force.
	HoldUntil      *time.Time        `json:"hold_until,omitempty"`
	HoldReason     string            `json:"hold_reason,omitempty"`
	ProbeInFlight  bool              `json:"probe_in_flight"`      // a recovery probe turn is out
	ProbeSuccesses int               `json:"probe_successes"`      // of ProbesNeeded, while Recovering
	ProbesNeeded   int               `json:"probes_needed"`        // RecoverySuccessesNeeded
	Failures       int               `json:"consecutive_failures"` // toward TripThreshold
	TripThreshold  int               `json:"trip_threshold"`
	Activated      bool              `json:"fallback_activated"` // ever tripped
	TrippedAt      *time.Time        `json:"tripped_at,omitempty"`
	Chain          []ChainEntryState `json:"chain"`
	// Pools are the model's pool entries with their members (absent: none).
	Pools []PoolState `json:"pools,omitempty"`
}

// ChainEntryState is one chain entry in a [ModelState].
type ChainEntryState struct {
	Model     string `json:"model"`
	Attempts  int    `json:"attempts"`
	Budget    int    `json:"budget"` // MaxFailCount: the entry fails when Attempts reaches it
	Available bool   `json:"available"`
	Failed    bool   `json:"failed"`
	Active    bool   `json:"active"`
	// DisabledUntil and DisabledReason describe a manual disable (absent
	// until: until enabled).
	DisabledUntil  *time.Time `json:"disabled_until,omitempty"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
}

// ToolState is one tool breaker in a [State].
type ToolState struct {
	Set     string           `json:"set"`
	Name    string           `json:"name"`
	State   breaker.State    `json:"state"`
	Status  health.Status    `json:"status"`
	RetryIn string           `json:"retry_in"` // until a call would be let through, rounded up as breaker.RoundRetry ("0s": now)
	Breaker breaker.Snapshot `json:"breaker"`
	Stats   health.Stats     `json:"stats"`
}

func orInt(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Read builds the State of src (and the transitions of log, if not nil) with
// pure reads only.
func Read(src Source, log *Log) State {
	st := State{Now: time.Now(), Models: []ModelState{}, Tools: []ToolState{}, Transitions: []Transition{}}
	s := src()
	for _, m := range s.Models {
		st.Models = append(st.Models, readModel(m))
	}
	for _, set := range s.Tools {
		for _, h := range set.Registry.Summary() {
			b := set.Registry.Breaker(h.Tool) // exists: Summary lists only created breakers
			st.Tools = append(st.Tools, ToolState{Set: set.Name, Name: h.Tool, State: h.State, Status: h.Status,
				RetryIn: breaker.RoundRetry(b.RetryIn()).String(), Breaker: b.Snapshot(), Stats: h.Stats})
		}
	}
	if log != nil {
		st.Transitions = log.Recent()
	}
	return st
}

func readModel(m Model) ModelState {
	set := m.Settings
	snap := m.Manager.Snapshot()
	ms := ModelState{
		Name: m.Name, Primary: set.Primary, State: snap.State, ActiveModel: m.Manager.ActiveModel(),
		ProbeInFlight: !snap.ProbeStartedAt.IsZero(), ProbeSuccesses: snap.ProbeSuccesses,
		ProbesNeeded:  orInt(set.RecoverySuccessesNeeded, fallback.DefaultRecoverySuccessesNeeded),
		Failures:      snap.ConsecutiveFailures,
		TripThreshold: orInt(set.TripThreshold, fallback.DefaultTripThreshold),
		Activated:     snap.FallbackActivated,
		Trips:         snap.Trips,
		Chain:         []ChainEntryState{},
		Pools:         m.Pools,
	}
	if !snap.TrippedAt.IsZero() {
		t := snap.TrippedAt
		ms.TrippedAt = &t
	}
	if snap.State != fallback.Primary && !snap.CooldownEnds.IsZero() {
		end := snap.CooldownEnds
		ms.OpenUntil, ms.OpenReason = &end, snap.CooldownCause.String()
		if !snap.TrippedAt.IsZero() {
			ms.Cooldown = end.Sub(snap.TrippedAt).String()
		}
		if snap.State == fallback.Fallback {
			now := time.Now
			if set.Now != nil {
				now = set.Now
			}
			ms.CooldownLeft = max(end.Sub(now()), 0).Round(time.Millisecond).String()
		}
	}
	if !snap.HoldUntil.IsZero() {
		end := snap.HoldUntil
		ms.HoldUntil, ms.HoldReason = &end, snap.HoldReason
	}
	budget := orInt(set.MaxFailCount, fallback.DefaultMaxFailCount)
	activeFound := false
	for _, e := range snap.Chain {
		active := snap.State == fallback.Fallback && !e.Failed && !activeFound
		activeFound = activeFound || active
		ce := ChainEntryState{Model: e.Model, Attempts: e.Attempts, Budget: budget,
			Available: e.Available, Failed: e.Failed, Active: active, DisabledReason: e.DisabledReason}
		if !e.DisabledUntil.IsZero() {
			until := e.DisabledUntil
			ce.DisabledUntil = &until
		}
		ms.Chain = append(ms.Chain, ce)
	}
	return ms
}
