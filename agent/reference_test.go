package agent_test

import (
	"fmt"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// refBreaker is a reference model of one tool breaker (SEMANTICS 1) for calls
// made one at a time, written from the table, independently of package
// breaker: with serial calls no failure is stale and no probe is in flight
// when the router reads, so the model needs only these fields.
type refBreaker struct {
	state       breaker.State
	fails       int
	lastFailure time.Time
}

// refParams are the settings the reference model and the agent under test
// share.
type refParams struct {
	threshold int
	cooldown  time.Duration
	lease     time.Duration
	timeout   time.Duration // the tools' own timeout
}

func (b *refBreaker) wouldAllow(p refParams, now time.Time) bool {
	return b.state != breaker.Open || now.Sub(b.lastFailure) >= p.cooldown
}

// allow takes the gate (wouldAllow must hold) and reports whether the call is
// the probe.
func (b *refBreaker) allow(now time.Time) bool {
	if b.state == breaker.Open {
		b.state = breaker.HalfOpen
		return true
	}
	return false
}

// settle applies a verdict arriving at now; a failure is dated at (rev 3: a
// timeout at its call's start, a probe cut at its lease at the lease end), and
// the last failure never moves back.
func (b *refBreaker) settle(p refParams, ok bool, now, at time.Time) {
	switch {
	case ok && b.state == breaker.HalfOpen:
		b.state, b.fails = breaker.Closed, 0
	case ok:
		b.fails = 0
	default:
		b.fails++
		if at.After(b.lastFailure) {
			b.lastFailure = at
		}
		if b.state == breaker.HalfOpen || b.fails >= p.threshold {
			b.state = breaker.Open
		}
	}
}

// refBehaviour is what a tool invocation does: "ok", "error" or "hang" (until
// its context ends: the tool's timeout, or a probe's lease).
type refBehaviour string

// refCall is what the reference model predicts for one tool call.
type refCall struct {
	resolved, fallThrough string
	read                  string        // the text the model reads
	duration              time.Duration // how long the call took
	consumed              int           // behaviours used (0, 1 or 2)
}

// refAgent models the agent's tool-call path: the router (first candidate
// whose breaker would allow a call), the gate, the call bounded by the tool's
// timeout or the probe's lease, the verdict, and one fall-through after a
// failed probe of an idempotent tool.
type refAgent struct {
	p             refParams
	tools         map[string]*refBreaker
	candidates    []string // the called tool, then its backups
	notIdempotent map[string]bool
}

func (r *refAgent) resolve(now time.Time) string {
	for _, c := range r.candidates {
		if r.tools[c].wouldAllow(r.p, now) {
			return c
		}
	}
	return ""
}

// invoke runs one candidate; it returns the text read, whether it failed as a
// probe, and the time it took.
func (r *refAgent) invoke(name string, do refBehaviour, now time.Time) (string, bool, time.Duration) {
	b := r.tools[name]
	probe := b.allow(now)
	var d time.Duration
	var read string
	switch do {
	case "ok":
		read = "ok from " + name
	case "error":
		read = name + " down"
	case "hang":
		d = r.p.timeout
		if probe {
			d = min(d, r.p.lease)
		}
		read = fmt.Sprintf("tool '%s' timed out after %v", name, d)
	}
	at := now.Add(d)
	if do == "hang" && !probe {
		at = now // a timeout is dated at its call's start
	}
	b.settle(r.p, do == "ok", now.Add(d), at)
	return read, probe && do != "ok", d
}

// call predicts one call at now, drawing behaviours from next in order.
func (r *refAgent) call(now time.Time, next func() refBehaviour) refCall {
	name := r.resolve(now)
	if name == "" {
		return refCall{read: "refused"}
	}
	read, probeFailed, d := r.invoke(name, next(), now)
	c := refCall{resolved: name, read: read, duration: d, consumed: 1}
	if probeFailed && !r.notIdempotent[name] {
		if second := r.resolve(now.Add(d)); second != "" && second != name {
			read2, _, d2 := r.invoke(second, next(), now.Add(d))
			c = refCall{resolved: second, fallThrough: name, read: read2, duration: d + d2, consumed: 2}
		}
	}
	return c
}
