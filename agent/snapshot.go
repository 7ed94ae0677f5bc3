package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
	"github.com/loopctl/loopctl-go/health"
)

// Snapshot is the state of an Agent's breakers: the model breaker with its
// fallback chain and every tool's breaker and statistics. It is built from
// pure reads (see [Agent.Snapshot]).
//
// Its JSON form (snake_case keys, enums as their names, durations as Go
// duration strings such as "1.5s", zero times omitted) is meant for
// dashboards and logs, e.g.
//
//	{"primary":"gpt-a","active_model":"gpt-b","models":{"state":"fallback",…},
//	 "tools":[{"name":"search","breaker":{"state":"open",…},"status":"unhealthy",…}]}
type Snapshot struct {
	// Primary is the model breaker's primary model.
	Primary string
	// ActiveModel is where the next turn would be routed ("" if the chain is
	// spent and the cooldown has not passed), as [fallback.Manager.ActiveModel].
	ActiveModel string
	// Models is the model breaker's state and chain.
	Models fallback.Snapshot
	// Tools describes every tool of the Config, sorted by name.
	Tools []ToolSnapshot
}

// ToolSnapshot is the state of one tool's breaker in a [Snapshot].
type ToolSnapshot struct {
	// Name is the tool's name.
	Name string
	// Breaker is the tool breaker's state (a tool never called reads Closed).
	Breaker breaker.Snapshot
	// RetryIn is how long until the breaker would let a call through: 0 when
	// it would now.
	RetryIn time.Duration
	// Status is the tool's health, judged from its breaker and Stats.
	Status health.Status
	// Stats is the tool's call record.
	Stats health.Stats
	// Backups are the tools a call falls back to, in order (nil: none).
	Backups []string
}

// Snapshot returns the state of the Agent's model breaker and of every tool's
// breaker. It uses only pure reads: it changes nothing, takes no probe slot,
// and creates no breaker for a tool that was never called. Each breaker is
// read consistently, but the breakers are read one after the other, not at
// one instant. Safe for concurrent use with Run.
func (a *Agent) Snapshot() Snapshot {
	s := Snapshot{
		Primary:     a.primary(),
		ActiveModel: a.models.ActiveModel(),
		Models:      a.models.Snapshot(),
	}
	known := make(map[string]bool)
	for _, h := range a.tools.Summary() {
		known[h.Tool] = true
	}
	names := make([]string, 0, len(a.byName))
	for name := range a.byName {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		ts := ToolSnapshot{Name: name, Status: health.Healthy, Stats: a.tools.Stats(name)}
		if known[name] {
			b := a.tools.Breaker(name) // exists: Breaker creates only unknown tools
			ts.Breaker = b.Snapshot()
			ts.RetryIn = b.RetryIn()
			ts.Status = a.tools.Status(name)
		}
		if bs := a.backups[name]; len(bs) > 0 {
			ts.Backups = slices.Clone(bs)
		}
		s.Tools = append(s.Tools, ts)
	}
	return s
}

// primary returns the primary model: the one model of the providers map that
// is not in the chain (fallback.New rejects a chain naming the primary).
func (a *Agent) primary() string {
	chain := a.models.Snapshot().Chain
	for m := range a.providers {
		if !slices.ContainsFunc(chain, func(e fallback.Entry) bool { return e.Model == m }) {
			return m
		}
	}
	return ""
}

type snapshotJSON struct {
	Primary     string            `json:"primary"`
	ActiveModel string            `json:"active_model"`
	Models      fallback.Snapshot `json:"models"`
	Tools       []ToolSnapshot    `json:"tools"`
}

// MarshalJSON writes the snapshot in the form described at [Snapshot];
// tools is always an array.
func (s Snapshot) MarshalJSON() ([]byte, error) {
	w := snapshotJSON(s)
	if w.Tools == nil {
		w.Tools = []ToolSnapshot{}
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads what [Snapshot.MarshalJSON] writes.
func (s *Snapshot) UnmarshalJSON(data []byte) error {
	var w snapshotJSON
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*s = Snapshot(w)
	return nil
}

type toolSnapshotJSON struct {
	Name    string           `json:"name"`
	Breaker breaker.Snapshot `json:"breaker"`
	RetryIn string           `json:"retry_in"`
	Status  health.Status    `json:"status"`
	Stats   health.Stats     `json:"stats"`
	Backups []string         `json:"backups,omitempty"`
}

// MarshalJSON writes
// {"name":"search","breaker":{…},"retry_in":"30s","status":"unhealthy","stats":{…},"backups":["web"]},
// omitting backups when there are none.
func (t ToolSnapshot) MarshalJSON() ([]byte, error) {
	return json.Marshal(toolSnapshotJSON{Name: t.Name, Breaker: t.Breaker, RetryIn: breaker.RoundRetry(t.RetryIn).String(),
		Status: t.Status, Stats: t.Stats, Backups: t.Backups})
}

// UnmarshalJSON reads what [ToolSnapshot.MarshalJSON] writes.
func (t *ToolSnapshot) UnmarshalJSON(data []byte) error {
	w := toolSnapshotJSON{RetryIn: "0s", Stats: health.Stats{EWMA: 1}}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	d, err := time.ParseDuration(w.RetryIn)
	if err != nil {
		return fmt.Errorf("agent: retry_in: %w", err)
	}
	*t = ToolSnapshot{Name: w.Name, Breaker: w.Breaker, RetryIn: d, Status: w.Status, Stats: w.Stats, Backups: w.Backups}
	return nil
}
