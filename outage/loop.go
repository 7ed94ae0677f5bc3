package outage

import (
	"context"
	"math/rand/v2"
	"time"
)

// loop is the event loop both simulations run on: the virtual clock and the
// event queue.
type loop struct {
	q   eventQueue
	now time.Duration
}

// clock is the breaker's clock: the virtual time as a wall-clock instant.
func (l *loop) clock() time.Time { return epoch.Add(l.now) }

// handler is what a simulation does at each kind of event.
type handler interface {
	call(i int, at time.Duration) // caller i's tick: a new call unless one is in flight
	attempt(i int)                // caller i's next attempt starts
	attemptEnd(i int)             // caller i's attempt ends
	callEnd(i int)                // caller i's call ends
}

// drive gives each of n callers a first tick at a phase drawn from seed
// within interval, then pops the events in order until none is left: it moves
// the clock to each, schedules a tick's next one (if before horizon), hands
// the event to h and then calls after (if not nil). It returns ctx.Err() if
// ctx ends first.
func (l *loop) drive(ctx context.Context, n int, seed uint64, interval, horizon time.Duration, h handler, after func()) error {
	phases := rand.New(rand.NewPCG(seed, 1))
	for i := range n {
		l.q.push(time.Duration(phases.Int64N(int64(interval))), evTick, i)
	}
	for k := 0; l.q.len() > 0; k++ {
		if k&0xfff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		ev := l.q.pop()
		l.now = ev.at
		i := int(ev.caller)
		switch ev.kind {
		case evTick:
			if next := ev.at + interval; next < horizon {
				l.q.push(next, evTick, i)
			}
			h.call(i, ev.at)
		case evAttempt:
			h.attempt(i)
		case evAttemptEnd:
			h.attemptEnd(i)
		case evCallEnd:
			h.callEnd(i)
		}
		if after != nil {
			after()
		}
	}
	return nil
}
