package health

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/breaker"

	"github.com/loopctl/loopctl-go/internal/enumtext"
)

// JSON form of the registry's values: enums are their String() text, and
// durations are Go duration strings such as "1.5s" (time.Duration.String,
// parsed back with time.ParseDuration).

var statusTexts = [...]string{Healthy: "healthy", Degraded: "degraded", Unhealthy: "unhealthy"}

// MarshalText returns the status's name ("healthy", "degraded", "unhealthy").
// Any other value is an error.
func (s Status) MarshalText() ([]byte, error) {
	return enumtext.Marshal("health", "Status", s, statusTexts[:])
}

// UnmarshalText parses a name written by [Status.MarshalText]. Any other text
// is an error.
func (s *Status) UnmarshalText(text []byte) error {
	return enumtext.Set(s, "health", "status", text, statusTexts[:])
}

// jsonDuration is a time.Duration written as its String() text ("1.5s").
type jsonDuration time.Duration

func (d jsonDuration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

func (d *jsonDuration) UnmarshalText(text []byte) error {
	v, err := time.ParseDuration(string(text))
	if err != nil {
		return fmt.Errorf("health: bad duration: %w", err)
	}
	*d = jsonDuration(v)
	return nil
}

// statsJSON is the wire form of [Stats].
type statsJSON struct {
	Calls         uint64       `json:"calls"`
	Successes     uint64       `json:"successes"`
	Failures      uint64       `json:"failures"`
	TotalDuration jsonDuration `json:"total_duration"`
	MaxDuration   jsonDuration `json:"max_duration"`
	EWMA          float64      `json:"ewma"`
	SuccessRate   float64      `json:"success_rate"`
	Score         float64      `json:"score"`
}

// MarshalJSON writes the stats with durations as strings and the derived
// success_rate and score, e.g.
// {"calls":4,"successes":3,"failures":1,"total_duration":"1.2s","max_duration":"500ms","ewma":0.7,"success_rate":0.75,"score":0.715}.
func (s Stats) MarshalJSON() ([]byte, error) {
	return json.Marshal(statsJSON{
		Calls: s.Calls, Successes: s.Successes, Failures: s.Failures,
		TotalDuration: jsonDuration(s.TotalDuration), MaxDuration: jsonDuration(s.MaxDuration),
		EWMA: s.EWMA, SuccessRate: s.SuccessRate(), Score: s.Score(),
	})
}

// UnmarshalJSON reads what [Stats.MarshalJSON] writes. The derived
// success_rate and score are ignored; an absent ewma reads as 1.0, the EWMA of
// a tool with no calls.
func (s *Stats) UnmarshalJSON(data []byte) error {
	w := statsJSON{EWMA: 1}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*s = Stats{
		Calls: w.Calls, Successes: w.Successes, Failures: w.Failures,
		TotalDuration: time.Duration(w.TotalDuration), MaxDuration: time.Duration(w.MaxDuration),
		EWMA: w.EWMA,
	}
	return nil
}

// toolHealthJSON is the wire form of [ToolHealth].
type toolHealthJSON struct {
	Tool   string        `json:"tool"`
	State  breaker.State `json:"state"`
	Status Status        `json:"status"`
	Stats  Stats         `json:"stats"`
}

// MarshalJSON writes
// {"tool":"search","state":"open","status":"unhealthy","stats":{...}}.
func (h ToolHealth) MarshalJSON() ([]byte, error) {
	return json.Marshal(toolHealthJSON(h))
}

// UnmarshalJSON reads what [ToolHealth.MarshalJSON] writes.
func (h *ToolHealth) UnmarshalJSON(data []byte) error {
	w := toolHealthJSON{Stats: freshStats}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*h = ToolHealth(w)
	return nil
}
