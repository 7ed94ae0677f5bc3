package dashboard

import (
	"sync"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/fallback"
)

// Transition is one breaker transition shown on the page.
type Transition struct {
	At        time.Time `json:"at"`
	Breaker   string    `json:"breaker"`              // the model breaker's or the tool's name
	Kind      string    `json:"kind"`                 // "model" or "tool"
	From      string    `json:"from"`                 // the state before, e.g. "primary" or "closed"
	To        string    `json:"to"`                   // the state after
	FromModel string    `json:"from_model,omitempty"` // model breakers: the routed model before
	ToModel   string    `json:"to_model,omitempty"`   // model breakers: the routed model after
}

// Log keeps the most recent transitions for the page. Feed it with its hooks
// (or Add). Safe for concurrent use.
type Log struct {
	mu    sync.Mutex
	max   int
	items []Transition // oldest first
	now   func() time.Time
}

// NewLog returns a Log keeping the last max transitions (max <= 0: 50).
func NewLog(max int) *Log {
	if max <= 0 {
		max = 50
	}
	return &Log{max: max, now: time.Now}
}

// Add records t.
func (l *Log) Add(t Transition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.items) == l.max {
		copy(l.items, l.items[1:])
		l.items = l.items[:len(l.items)-1]
	}
	l.items = append(l.items, t)
}

// Recent returns the recorded transitions, newest first.
func (l *Log) Recent() []Transition {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Transition, len(l.items))
	for i, t := range l.items {
		out[len(out)-1-i] = t
	}
	return out
}

// ModelHook returns a hook for fallback.Settings.OnTransition that records the
// transitions of the model breaker called name.
func (l *Log) ModelHook(name string) func(fallback.Transition) {
	return func(t fallback.Transition) {
		at := t.At
		if at.IsZero() {
			at = l.now()
		}
		l.Add(Transition{At: at, Breaker: name, Kind: "model", From: t.From.String(), To: t.To.String(),
			FromModel: t.FromModel, ToModel: t.ToModel})
	}
}

// ToolHook records a tool breaker's transition, timed by the wall clock. Its
// signature is that of breaker.Settings.OnStateChange.
func (l *Log) ToolHook(name string, from, to breaker.State) {
	l.Add(Transition{At: l.now(), Breaker: name, Kind: "tool", From: from.String(), To: to.String()})
}
