package outage

import "time"

// eventKind says what happens to a caller at an event.
type eventKind uint8

const (
	evTick       eventKind = iota // the caller's scheduled tick
	evAttempt                     // a backoff wait ended: the next attempt starts
	evAttemptEnd                  // the outcome of the caller's attempt arrives
	evCallEnd                     // the caller's call has ended (brownout: the backup answered)
)

// event is one entry of the event queue.
type event struct {
	at     time.Duration // virtual time since the start of the run
	seq    uint64        // scheduling order; breaks ties
	kind   eventKind
	caller int32
}

func (e event) before(o event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.seq < o.seq
}

// eventQueue is a binary min-heap of events ordered by (at, seq).
type eventQueue struct {
	items []event
	seq   uint64
}

func (q *eventQueue) len() int { return len(q.items) }

// push schedules an event; events at the same instant pop in push order.
func (q *eventQueue) push(at time.Duration, kind eventKind, caller int) {
	q.seq++
	q.items = append(q.items, event{at: at, seq: q.seq, kind: kind, caller: int32(caller)})
	i := len(q.items) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.items[i].before(q.items[p]) {
			break
		}
		q.items[i], q.items[p] = q.items[p], q.items[i]
		i = p
	}
}

// pop removes and returns the earliest event. The queue must not be empty.
func (q *eventQueue) pop() event {
	top := q.items[0]
	last := len(q.items) - 1
	q.items[0] = q.items[last]
	q.items = q.items[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < last && q.items[l].before(q.items[m]) {
			m = l
		}
		if r < last && q.items[r].before(q.items[m]) {
			m = r
		}
		if m == i {
			return top
		}
		q.items[i], q.items[m] = q.items[m], q.items[i]
		i = m
	}
}
