package breaker

import (
	"encoding/json"
	"time"

	"github.com/loopctl/loopctl-go/internal/enumtext"
	"github.com/loopctl/loopctl-go/internal/jsontime"
)

// JSON form of the breaker's values (see also package health and fallback):
// enums are their String() text, durations are Go duration strings such as
// "1.5s" (time.Duration.String, parsed back with time.ParseDuration), times are
// RFC 3339 with nanoseconds, and a zero time is omitted.

var stateTexts = [...]string{Closed: "closed", Open: "open", HalfOpen: "half-open"}

// MarshalText returns the state's name ("closed", "open", "half-open"). Any
// other value is an error.
func (s State) MarshalText() ([]byte, error) {
	return enumtext.Marshal("breaker", "State", s, stateTexts[:])
}

// UnmarshalText parses a name written by [State.MarshalText]. Any other text
// is an error.
func (s *State) UnmarshalText(text []byte) error {
	return enumtext.Set(s, "breaker", "state", text, stateTexts[:])
}

var causeTexts = [...]string{CauseRecoveryTimeout: "recovery_timeout", CauseBackoff: "backoff",
	CauseHint: "hint", CauseQuota: "quota", CauseManual: "manual"}

// MarshalText returns the cause's name ("recovery_timeout", "backoff",
// "hint", "quota", "manual"). Any other value is an error.
func (c Cause) MarshalText() ([]byte, error) {
	return enumtext.Marshal("breaker", "Cause", c, causeTexts[:])
}

// UnmarshalText parses a name written by [Cause.MarshalText]. Any other text
// is an error.
func (c *Cause) UnmarshalText(text []byte) error {
	return enumtext.Set(c, "breaker", "cause", text, causeTexts[:])
}

// snapshotJSON is the wire form of [Snapshot].
type snapshotJSON struct {
	State               State      `json:"state"`
	ConsecutiveFailures int        `json:"consecutive_failures"`
	LastFailure         *time.Time `json:"last_failure,omitempty"`
	ProbeStartedAt      *time.Time `json:"probe_started_at,omitempty"`
	Trips               int        `json:"trips,omitempty"`
	OpenUntil           *time.Time `json:"open_until,omitempty"`
	Cause               *Cause     `json:"cause,omitempty"`
}

// MarshalJSON writes the snapshot as
// {"state":"open","consecutive_failures":3,"last_failure":"2026-11-30T17:00:00Z","trips":1,"open_until":"2026-11-30T17:00:30Z","cause":"recovery_timeout"},
// omitting last_failure, probe_started_at, trips and open_until when they are zero,
// and cause when open_until is.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	w := snapshotJSON{
		State:               s.State,
		ConsecutiveFailures: s.ConsecutiveFailures,
		LastFailure:         jsontime.Omit(s.LastFailure),
		ProbeStartedAt:      jsontime.Omit(s.ProbeStartedAt),
		Trips:               s.Trips,
		OpenUntil:           jsontime.Omit(s.OpenUntil),
	}
	if w.OpenUntil != nil {
		w.Cause = &s.Cause
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what [Snapshot.MarshalJSON] writes; absent times are zero.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	var w snapshotJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*s = Snapshot{
		State:               w.State,
		ConsecutiveFailures: w.ConsecutiveFailures,
		LastFailure:         jsontime.Value(w.LastFailure),
		ProbeStartedAt:      jsontime.Value(w.ProbeStartedAt),
		Trips:               w.Trips,
		OpenUntil:           jsontime.Value(w.OpenUntil),
	}
	if w.Cause != nil {
		s.Cause = *w.Cause
	}
	return nil
}
