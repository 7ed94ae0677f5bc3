// Package notify delivers state-change callbacks outside every lock, in the order
// the events happened.
//
// The owner of some state records an event with [Queue.Push] while it still holds
// its own lock (so pushes are ordered exactly like the state changes), releases that
// lock, and then calls [Queue.Drain]. Drain delivers pending events one at a time
// with no lock held. If another goroutine is already draining, Drain returns at once
// and that goroutine delivers the event after the ones before it; with one caller at
// a time, every event has been delivered before Drain returns. A callback may call
// back into its owner: events it causes are queued and delivered after it returns.
package notify

import "sync"

// Queue is a FIFO of pending events of type E. The zero value is ready to use.
// A Queue is safe for concurrent use.
type Queue[E any] struct {
	mu       sync.Mutex
	pending  []E
	draining bool
}

// Push appends e to the queue. Call it while holding the lock that orders the
// events, then call Drain after releasing that lock.
func (q *Queue[E]) Push(e E) {
	q.mu.Lock()
	q.pending = append(q.pending, e)
	q.mu.Unlock()
}

// Drain calls deliver for every pending event, in order, with no lock held. It
// returns at once if another goroutine is draining; that goroutine delivers the
// events pushed before Drain was called.
func (q *Queue[E]) Drain(deliver func(E)) {
	q.mu.Lock()
	if q.draining {
		q.mu.Unlock()
		return
	}
	q.draining = true
	for len(q.pending) > 0 {
		e := q.pending[0]
		var zero E
		q.pending[0] = zero
		q.pending = q.pending[1:]
		q.mu.Unlock()
		q.deliver(deliver, e)
		q.mu.Lock()
	}
	q.pending = nil
	q.draining = false
	q.mu.Unlock()
}

// deliver calls fn(e) and, if fn panics, clears the draining flag so that later
// events are still delivered, then lets the panic continue.
func (q *Queue[E]) deliver(fn func(E), e E) {
	ok := false
	defer func() {
		if !ok {
			q.mu.Lock()
			q.draining = false
			q.mu.Unlock()
		}
	}()
	fn(e)
	ok = true
}
