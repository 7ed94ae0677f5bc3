package fallback

import (
	"encoding/json"
	"time"

	"github.com/loopctl/loopctl-go/internal/enumtext"
	"github.com/loopctl/loopctl-go/internal/jsontime"
)

// JSON form of the manager's values: enums are their String() text, times are
// RFC 3339 with nanoseconds, and a zero time is omitted.

var (
	stateTexts = [...]string{Primary: "primary", Fallback: "fallback", Recovering: "recovering"}
	kindTexts  = [...]string{Transient: "transient", RateLimit: "rate-limit", Quota: "quota"}
	causeTexts = [...]string{CauseRecoveryTimeout: "recovery_timeout", CauseHint: "hint", CauseQuota: "quota", CauseManual: "manual", CauseBackoff: "backoff"}
)

// MarshalText returns the cause's name ("recovery_timeout", "hint", "quota",
// "manual", "backoff").
// Any other value is an error.
func (c Cause) MarshalText() ([]byte, error) {
	return enumtext.Marshal("fallback", "Cause", c, causeTexts[:])
}

// UnmarshalText parses a name written by [Cause.MarshalText]. Any other text
// is an error.
func (c *Cause) UnmarshalText(text []byte) error {
	return enumtext.Set(c, "fallback", "cause", text, causeTexts[:])
}

// MarshalText returns the state's name ("primary", "fallback", "recovering").
// Any other value is an error.
func (s State) MarshalText() ([]byte, error) {
	return enumtext.Marshal("fallback", "State", s, stateTexts[:])
}

// UnmarshalText parses a name written by [State.MarshalText]. Any other text
// is an error.
func (s *State) UnmarshalText(text []byte) error {
	return enumtext.Set(s, "fallback", "state", text, stateTexts[:])
}

// MarshalText returns the kind's name ("transient", "rate-limit", "quota").
// Any other value is an error.
func (k Kind) MarshalText() ([]byte, error) {
	return enumtext.Marshal("fallback", "Kind", k, kindTexts[:])
}

// UnmarshalText parses a name written by [Kind.MarshalText]. Any other text is
// an error.
func (k *Kind) UnmarshalText(text []byte) error {
	return enumtext.Set(k, "fallback", "kind", text, kindTexts[:])
}

// snapshotJSON is the wire form of [Snapshot].
type snapshotJSON struct {
	State               State      `json:"state"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	ProbeSuccesses      int        `json:"probe_successes"`
	TrippedAt           *time.Time `json:"tripped_at,omitempty"`
	FallbackActivated   bool       `json:"fallback_activated"`
	Chain               []Entry    `json:"chain"`
	ProbeStartedAt      *time.Time `json:"probe_started_at,omitempty"`
	CooldownEnds        *time.Time `json:"cooldown_ends,omitempty"`
	CooldownCause       *Cause     `json:"cooldown_cause,omitempty"`
	HoldUntil           *time.Time `json:"hold_until,omitempty"`
	HoldReason          string     `json:"hold_reason,omitempty"`
	Trips               int        `json:"trips,omitempty"`
}

// MarshalJSON writes the snapshot as
// {"state":"fallback","consecutive_failures":0,"probe_successes":0,"tripped_at":"…","fallback_activated":true,"chain":[…]},
// omitting tripped_at, probe_started_at and cooldown_ends when they are zero,
// cooldown_cause ("recovery_timeout", "hint", "quota", "manual", "backoff")
// with cooldown_ends, and hold_until and hold_reason when no hold is in
// force; trips (the trip count) when it is not 0.
// chain is always an array ([] for no chain).
func (s Snapshot) MarshalJSON() ([]byte, error) {
	chain := s.Chain
	if chain == nil {
		chain = []Entry{}
	}
	var cause *Cause
	if !s.CooldownEnds.IsZero() {
		cause = &s.CooldownCause
	}
	return json.Marshal(snapshotJSON{
		State:               s.State,
		ConsecutiveFailures: s.ConsecutiveFailures,
		ProbeSuccesses:      s.ProbeSuccesses,
		TrippedAt:           jsontime.Omit(s.TrippedAt),
		FallbackActivated:   s.FallbackActivated,
		Chain:               chain,
		ProbeStartedAt:      jsontime.Omit(s.ProbeStartedAt),
		CooldownEnds:        jsontime.Omit(s.CooldownEnds),
		CooldownCause:       cause,
		HoldUntil:           jsontime.Omit(s.HoldUntil),
		HoldReason:          s.HoldReason,
		Trips:               s.Trips,
	})
}

// UnmarshalJSON reads what [Snapshot.MarshalJSON] writes; absent times are
// zero and an empty chain reads as an empty (non-nil) slice.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	var w snapshotJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Chain == nil {
		w.Chain = []Entry{}
	}
	*s = Snapshot{
		State:               w.State,
		ConsecutiveFailures: w.ConsecutiveFailures,
		ProbeSuccesses:      w.ProbeSuccesses,
		TrippedAt:           jsontime.Value(w.TrippedAt),
		FallbackActivated:   w.FallbackActivated,
		Chain:               w.Chain,
		ProbeStartedAt:      jsontime.Value(w.ProbeStartedAt),
		CooldownEnds:        jsontime.Value(w.CooldownEnds),
		HoldUntil:           jsontime.Value(w.HoldUntil),
		HoldReason:          w.HoldReason,
		Trips:               w.Trips,
	}
	if w.CooldownCause != nil {
		s.CooldownCause = *w.CooldownCause
	}
	return nil
}

// entryJSON is the wire form of [Entry].
type entryJSON struct {
	Model     string `json:"model"`
	Attempts  int    `json:"attempts"`
	Available bool   `json:"available"`
	Failed    bool   `json:"failed"`
	// DisabledUntil and DisabledReason are omitted when zero.
	DisabledUntil  *time.Time `json:"disabled_until,omitempty"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
}

// MarshalJSON writes {"model":"m","attempts":1,"available":true,"failed":false},
// with disabled_until and disabled_reason when they are set.
func (e Entry) MarshalJSON() ([]byte, error) {
	return json.Marshal(entryJSON{Model: e.Model, Attempts: e.Attempts, Available: e.Available, Failed: e.Failed,
		DisabledUntil: jsontime.Omit(e.DisabledUntil), DisabledReason: e.DisabledReason})
}

// UnmarshalJSON reads what [Entry.MarshalJSON] writes.
func (e *Entry) UnmarshalJSON(data []byte) error {
	var w entryJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*e = Entry{Model: w.Model, Attempts: w.Attempts, Available: w.Available, Failed: w.Failed,
		DisabledUntil: jsontime.Value(w.DisabledUntil), DisabledReason: w.DisabledReason}
	return nil
}

// transitionJSON is the wire form of [Transition].
type transitionJSON struct {
	From      State      `json:"from"`
	To        State      `json:"to"`
	FromModel string     `json:"from_model"`
	ToModel   string     `json:"to_model"`
	At        *time.Time `json:"at,omitempty"`
	Manual    string     `json:"manual,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	Until     *time.Time `json:"until,omitempty"`
}

// MarshalJSON writes
// {"from":"primary","to":"fallback","from_model":"a","to_model":"b","at":"…"},
// omitting at when it is zero, and with "manual", "reason" and "until"
// when an operator caused it (each omitted when empty).
func (t Transition) MarshalJSON() ([]byte, error) {
	return json.Marshal(transitionJSON{From: t.From, To: t.To, FromModel: t.FromModel, ToModel: t.ToModel, At: jsontime.Omit(t.At),
		Manual: t.Manual, Reason: t.Reason, Until: jsontime.Omit(t.Until)})
}

// UnmarshalJSON reads what [Transition.MarshalJSON] writes.
func (t *Transition) UnmarshalJSON(data []byte) error {
	var w transitionJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*t = Transition{From: w.From, To: w.To, FromModel: w.FromModel, ToModel: w.ToModel, At: jsontime.Value(w.At),
		Manual: w.Manual, Reason: w.Reason, Until: jsontime.Value(w.Until)}
	return nil
}
