package fleet

import (
	"time"

	"github.com/loopctl/loopctl-go/breaker"
)

// ToolBackend returns a [breaker.Backend] that keeps every breaker built
// with it in this Store, shared by the fleet: set it as
// breaker.Settings.Backend, and breaker.New, a health.Registry built with
// those settings (one shared breaker per tool), the router and the agent
// use shared tool breakers with no other change. A breaker's failure-rate
// window (SEMANTICS §8.1, §8.2) stays in its process, and a trip it causes
// (breaker.OutcomeTrip) is written through the store like any trip, so the
// fleet opens as one (docs/FLEET.md). Breakers of the same name
// attached to one Store share one [ToolBreaker].
func (s *Store) ToolBackend() breaker.Backend { return toolBackend{s} }

type toolBackend struct{ s *Store }

// Attach returns the shared tool breaker named bs.Name.
func (tb toolBackend) Attach(bs breaker.Settings) (breaker.Shared, error) {
	bs.Backend = nil
	s := tb.s
	s.mu.Lock()
	if m, ok := s.members[s.key("tool", bs.Name)+":ch"].(*ToolBreaker); ok {
		s.mu.Unlock()
		return toolShared{m}, nil
	}
	s.mu.Unlock()
	b, err := s.Tool(bs)
	if err != nil {
		return nil, err
	}
	return toolShared{b}, nil
}

// toolShared adapts a ToolBreaker to breaker.Shared.
type toolShared struct{ b *ToolBreaker }

func (t toolShared) Allow() (breaker.SharedPermit, error) {
	p, err := t.b.Allow()
	if err != nil {
		return breaker.SharedPermit{}, err
	}
	sp := breaker.SharedPermit{Gen: p.gen, Issued: p.at, Probe: p.probe}
	if p.b == nil {
		sp.Gen = failOpenGen
	}
	if p.probe {
		sp.Deadline = p.dl
	}
	return sp, nil
}

// failOpenGen marks a FailOpen permit, whose verdict goes nowhere.
const failOpenGen = ^uint64(0)

func (t toolShared) Settle(p breaker.SharedPermit, o breaker.Outcome) {
	if p.Gen == failOpenGen {
		return
	}
	q := t.permit(p)
	trip := o&breaker.OutcomeTrip != 0 // the process's window tripped: the fleet opens as one
	switch o &^ breaker.OutcomeTrip {
	case breaker.OutcomeSuccess:
		if trip || q.probe || !t.b.mirror.Load().quiet {
			t.b.settle(q, "success", trip)
		}
	case breaker.OutcomeSlowProbe:
		t.b.settle(q, "slowprobe", false)
	case breaker.OutcomeFailure:
		t.b.settle(q, "failure", trip)
	case breaker.OutcomeTimeout:
		t.b.settle(q, "timeout", trip)
	default:
		q.Cancel()
	}
}

// permit is the fleet Permit of a breaker's SharedPermit p.
func (t toolShared) permit(p breaker.SharedPermit) Permit {
	q := Permit{b: t.b, gen: p.Gen, at: p.Issued, probe: p.Probe}
	if p.Probe { // the breaker hands back the lease end: the grant, in store µs
		q.dl = p.Deadline
		q.at = (p.Deadline+t.b.s.clock.offset.Load())/1000 - t.b.mirror.Load().pl
	}
	return q
}

// SettleLimit applies a rate-limit verdict (breaker.OutcomeRateLimited with
// a hint, or breaker.OutcomeQuota) as [Permit.RateLimited] and
// [Permit.QuotaExhausted] do.
func (t toolShared) SettleLimit(p breaker.SharedPermit, o breaker.Outcome, hint time.Time) {
	if p.Gen == failOpenGen {
		return
	}
	t.b.settleLimit(t.permit(p), o == breaker.OutcomeQuota, hint)
}

// Reconfigure is [ToolBreaker.Reconfigure].
func (t toolShared) Reconfigure(s breaker.Settings) error { return t.b.Reconfigure(s) }

// Quiet publishes the mirror's quiet bit and generation (breaker.QuietSource):
// a breaker.Breaker then grants the steady Closed gate as ToolBreaker.Allow does,
// without calling Allow.
func (t toolShared) Quiet() *breaker.Quiet { return t.b.quiet }

func (t toolShared) RetryIn() time.Duration     { return t.b.RetryIn() }
func (t toolShared) State() breaker.State       { return t.b.State() }
func (t toolShared) Snapshot() breaker.Snapshot { return t.b.Snapshot().Snapshot }
func (t toolShared) Reset()                     { t.b.Reset() }
