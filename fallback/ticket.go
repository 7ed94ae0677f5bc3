package fallback

import (
	"sync/atomic"
	"time"

	"github.com/loopctl/loopctl-go/internal/ratewindow"
)

// slot lets a Turn detect its second settlement without allocating per ticket:
// seq changes when the ticket holding the slot is settled (the settlement that
// moves it is the first), and the slot is then reused by a later ticket. A slot
// of a ticket that is never settled is never reused. A slot fills a cache line
// (64-byte objects are 64-byte aligned), so that the settlements of turns on
// different cores do not contend on neighbouring slots.
type slot struct {
	seq atomic.Uint64
	a   atomic.Pointer[Attempts] // the turn of a ticket begun by Next; nil for Begin
	_   [48]byte
}

// takeSlot returns a free slot for a ticket of the turn a (nil: Begin).
func (m *Manager) takeSlot(a *Attempts) *slot {
	s, _ := m.slots.Get().(*slot)
	if s == nil {
		s = new(slot)
	}
	if a != nil {
		s.a.Store(a)
	}
	return s
}

// release returns the slot of a settled ticket to the pool.
func (m *Manager) release(s *slot) {
	if s.a.Load() != nil {
		s.a.Store(nil)
	}
	m.slots.Put(s)
}

// Ticket is what [Manager.Begin] and [Manager.Next] hand out for one
// attempt: the permission to call one model, settled once with its verdict.
// It names the model to call and remembers who served it, in which
// generation, and whether it is the probe. Settle it exactly once with
// [Ticket.Success], [Ticket.Fail] or [Ticket.Cancel]; the verdict applies to
// the model that served the ticket. (A turn is what the breaker sees of one
// request or agent turn: its attempts, each with its ticket, share one
// [Attempts].)
//
// Settling is idempotent: only the first settlement of a ticket (or of any copy
// of it) counts, and later ones do nothing. The zero Ticket names no model and
// settling it does nothing. A ticket that is never settled (lost) does no harm,
// except that a lost probe holds the probe slot until its lease ends.
type Ticket struct {
	m     *Manager
	slot  *slot
	seq   uint64
	gen   uint64 // the manager's generation when the ticket was issued
	epoch uint64 // the chain-budget epoch when the ticket was issued
	at    int64  // when the ticket was issued, as nanoseconds since Manager.epoch
	who   uint64 // who serves the turn: see serving
}

// Turn is the old name of [Ticket]: a Turn was one attempt's ticket, not a
// turn.
//
// Deprecated: use Ticket. Turn stays for one release.
type Turn = Ticket

// serving packs into one word (so that a Turn and an error are returned in
// registers) the chain entry that serves a turn (-1: the primary) in the low
// 32 bits and the probe's number (0: not a probe) in the high 32 bits.
func serving(entry int, probe uint32) uint64 {
	return uint64(probe)<<32 | uint64(uint32(int32(entry)))
}

// entry returns the chain entry that serves the turn; -1 for the primary.
func (t *Ticket) entry() int { return int(int32(uint32(t.who))) }

// probe returns the probe's number; 0 if the turn is not a probe.
func (t *Ticket) probe() uint32 { return uint32(t.who >> 32) }

// Model returns the model to send the turn to ("" for the zero Turn).
func (t Ticket) Model() string {
	switch {
	case t.m == nil:
		return ""
	case t.entry() < 0:
		return t.m.cfg.primary
	}
	return t.m.cfg.models[t.entry()]
}

// IsProbe reports whether the turn is the probe of the primary (Recovering).
// Only a probe's verdict moves the manager towards recovery.
func (t Ticket) IsProbe() bool { return t.probe() != 0 }

// Deadline returns the end of a probe ticket's lease and true: the instant, on
// the manager's clock (Settings.Now), at which an unsettled probe frees its
// slot and counts as one Transient probe failure dated at that instant. It
// returns the zero Time and false for any other ticket. A caller bounds the
// probe turn's request by it (for instance with context.WithDeadline, or with
// context.WithTimeout of the time left on the manager's clock).
func (t Ticket) Deadline() (time.Time, bool) {
	if t.probe() == 0 {
		return time.Time{}, false
	}
	return t.m.epoch.Add(time.Duration(t.at) + time.Duration(t.m.tuning.probeTimeout.Load())), true
}

// Success reports that the turn succeeded. On the primary in Primary it zeroes
// the consecutive failures; for the probe it extends the probe success streak,
// and the RecoverySuccessesNeeded-th consecutive success returns to Primary. A
// success served by a chain entry changes nothing.
func (t Ticket) Success() { t.settle(success, Failure{}) }

// SuccessAfter reports that the turn succeeded, as [Ticket.Success], and that
// its first content came firstContent after the turn's start (SEMANTICS
// §8.2): for a streamed answer the first content chunk, for a whole answer
// the answer. With SlowCallAfter and SlowCallRate set, a success of the
// primary's own turn in Primary later than SlowCallAfter is a slow call: a
// success for every rule, and a slow call in the window, after which the
// manager trips (as on the TripThreshold-th failure) when slow calls /
// verdicts ≥ SlowCallRate with at least RateMinCalls verdicts.
//
// With SlowCallAfter set (SlowCallRate is not needed), a probe whose first
// content came later than SlowCallAfter re-opens the manager at once,
// Recovering → Fallback, whatever the streak of probe successes so far, and
// raises the trip count (SEMANTICS §9.2): a primary that answers every
// probe slowly is not sick enough to fail but too slow to serve. The turn
// itself was served, so the caller keeps its answer and moves on to no
// other model. A caller streaming the probe settles it when the late first
// content arrives, whatever the stream does afterwards. The caller measures
// firstContent on its own clock, so the manager reads none for it.
func (t Ticket) SuccessAfter(firstContent time.Duration) {
	if t.m == nil {
		return
	}
	if t.probe() != 0 {
		if after := time.Duration(t.m.tuning.probeSlowAfter.Load()); after > 0 && firstContent > after {
			t.settle(slowProbe, Failure{})
			return
		}
	} else if after := time.Duration(t.m.tuning.slowAfter.Load()); after > 0 && firstContent > after && t.entry() < 0 {
		t.settle(slowSuccess, Failure{})
		return
	}
	t.settle(success, Failure{})
}

// Failure is Fail(Failure{Kind: k}): a failure with a kind and nothing else.
//
// Deprecated: use [Ticket.Fail], the one way to report a failure. Failure
// stays for one release.
func (t Ticket) Failure(k Kind) { t.Fail(Failure{Kind: k}) }

// Fail reports that the attempt failed, with its report f. On the primary
// in Primary it counts toward
// TripThreshold, unless it is stale: a counted success on the primary (one
// that reset a nonzero streak, or a probe success) came from a ticket issued
// after this one, so a newer turn has already proved the primary works, and
// the failure changes nothing. Tickets are ordered by issue coarsely: two are
// told apart when a state change, the first failure after a clean streak or a
// counted success came between them; tickets that cannot be told apart are
// taken as fresh. For the probe, a RateLimit failure re-trips at once and a
// Transient one resets the success streak and counts toward TripThreshold; on
// a chain entry it spends one of the entry's strikes (unless a recovery or
// Reset has renewed the budgets since the ticket was issued). A chain entry's
// success resets no streak, so it is never counted, and a success on the
// primary says nothing about an entry: an entry's failure is never stale.
//
// Beyond its kind: a Quota failure trips the primary at once
// (from Primary, or as the probe) and spends a chain entry's whole budget; the
// latest Hint among the failures that trip the primary holds its cooldown
// until then; a Timeout of a ticket that is not the probe is dated at its
// call's start, now − f.Elapsed (the caller reports the duration, so
// that Begin reads no clock), for the trip time and every cooldown. With a
// failure-rate window, a failure of the primary's own turn in Primary may
// trip it as the TripThreshold-th would (SEMANTICS §8.1). A ticket begun
// by [Manager.Next] records a slow failure (a timeout or a rate limit of any
// kind) and a failed probe in its turn's [Attempts].
func (t Ticket) Fail(f Failure) { t.settle(failure, f) }

// Cancel reports that the caller gave up (context.Canceled): no verdict, no
// counter changes. A cancelled probe frees the probe slot at once, so the next
// Begin gets the probe.
func (t Ticket) Cancel() { t.settle(cancel, Failure{}) }

// Skip reports that the ticket's model cannot serve this turn at all (a
// gateway entry whose wire cannot express the request, GATEWAY §8.3): no
// verdict and no counter changes, as [Ticket.Cancel], and a ticket begun by
// [Manager.Next] routes the rest of its turn past the model, as a slow
// failure does.
func (t Ticket) Skip() {
	if t.m == nil || t.slot == nil {
		return
	}
	if a := t.slot.a.Load(); a != nil && t.slot.seq.Load() == t.seq {
		a.markSlow(t.entry()+1, len(t.m.cfg.models)+1)
	}
	t.Cancel()
}

func (t Ticket) settle(v verdict, f Failure) {
	m := t.m
	if m == nil || t.slot == nil {
		return
	}
	if (v == success || v == cancel) && t.probe() == 0 {
		if w := m.word.Load(); w&(wRecovering|wFailures) == 0 {
			// Outside Recovering no lease can lapse, and a success or cancel
			// of a ticket that is not the probe changes nothing unless it may
			// zero the primary's failures: only the settlement itself is
			// recorded, and a success of the primary's own turn in Primary in
			// the window, if any.
			if t.slot.seq.CompareAndSwap(t.seq, t.seq+1) {
				if win := m.win.Load(); v == success && win != nil && w&wPrimary != 0 && t.entry() < 0 && t.gen >= m.changed.Load() {
					clk := m.clock()
					win.Add(int64(clk.sinceEpoch()), ratewindow.Success)
				}
				m.release(t.slot)
			}
			return
		}
	}
	if m.shared != nil {
		m.sharedSettle(t, v, f)
		return
	}
	rec := recorder{q: m.queue}
	clk := m.clock()
	m.mu.Lock()
	if !t.slot.seq.CompareAndSwap(t.seq, t.seq+1) {
		m.mu.Unlock()
		return // settled before
	}
	a := t.slot.a.Load()
	m.mc.settle(&t, v, f, &clk, &rec)
	m.publish()
	m.mu.Unlock()
	if a != nil && v == failure {
		a.record(&t, f)
	}
	m.release(t.slot)
	m.drain(&rec)
}
