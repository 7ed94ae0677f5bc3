package gateway

import (
	"time"

	"github.com/loopctl/loopctl-go/fallback"
)

// ModelBreaker is a model breaker the gateway can route a model's requests
// with, for a breaker whose state lives elsewhere (a store shared by a
// fleet, docs/FLEET.md): it has the methods of *fallback.Manager, with Begin
// returning the ticket as a [Ticket]. Plug one in with
// [Options.NewBreaker]; without it the gateway uses a *fallback.Manager
// directly (no interface on the hot path).
type ModelBreaker interface {
	Begin() (Ticket, error)
	State() fallback.State
	ActiveModel() string
	Snapshot() fallback.Snapshot
}

// Ticket is a turn ticket: the methods of fallback.Turn.
type Ticket interface {
	Model() string
	IsProbe() bool
	Deadline() (time.Time, bool)
	Success()
	Failure(fallback.Kind)
	Cancel()
}

// ticket is a fallback.Turn or, for a plugged-in breaker, a Ticket; the
// local path does not box the turn.
type ticket struct {
	turn  fallback.Turn
	other Ticket
}

func (t ticket) Model() string {
	if t.other != nil {
		return t.other.Model()
	}
	return t.turn.Model()
}

func (t ticket) Deadline() (time.Time, bool) {
	if t.other != nil {
		return t.other.Deadline()
	}
	return t.turn.Deadline()
}

func (t ticket) Success() {
	if t.other != nil {
		t.other.Success()
		return
	}
	t.turn.Success()
}

func (t ticket) Failure(k fallback.Kind) {
	if t.other != nil {
		t.other.Failure(k)
		return
	}
	t.turn.Failure(k)
}

// Fail reports a failure with its kind, hint and timeout (SEMANTICS §3 rev
// 3); a plugged-in Ticket gets the kind alone.
func (t ticket) Fail(f fallback.Failure) {
	if t.other != nil {
		t.other.Failure(f.Kind)
		return
	}
	t.turn.Fail(f)
}

func (t ticket) Cancel() {
	if t.other != nil {
		t.other.Cancel()
		return
	}
	t.turn.Cancel()
}

// begin starts an attempt of the request a on the route's breaker: one
// probe per request, past the models that failed it slowly (SEMANTICS §7).
func (rt *route) begin(a *fallback.Attempts) (ticket, error) {
	if rt.mgr != nil {
		t, err := rt.mgr.Next(a)
		return ticket{turn: t}, err
	}
	t, err := rt.shared.Begin()
	return ticket{other: t}, err
}

// breaker returns the route's breaker as a ModelBreaker.
func (rt *route) breaker() ModelBreaker {
	if rt.mgr != nil {
		return local{rt.mgr}
	}
	return rt.shared
}

// local is a *fallback.Manager as a ModelBreaker.
type local struct{ *fallback.Manager }

func (l local) Begin() (Ticket, error) {
	t, err := l.Manager.Begin()
	if err != nil {
		return nil, err
	}
	return t, nil
}
