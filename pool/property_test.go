package pool_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// model is a reference model of a pool's bookkeeping, kept apart from the
// package: the attempts in flight per member with their lease ends, and each
// request's tried members and probe. It reads the member breakers only
// through their pure reads.
type model struct {
	f        *fixture
	open     []modelAttempt
	requests []*modelRequest
}

type modelAttempt struct {
	a     pool.Attempt
	req   *modelRequest
	lease time.Time
}

type modelRequest struct {
	r           pool.Request
	serve       uint64
	session     pool.Session
	tried       uint64
	probed      bool // the pool attempt held a probe
	probeFailed bool
}

// admitted is the model's admission rule (§9.3 rule 2, no headroom figures).
func (m *model) admitted(q *modelRequest, i int, hedge bool) bool {
	b := m.f.bs[i]
	if q.serve&(1<<i) == 0 || q.tried&(1<<i) != 0 || !b.WouldAllow() {
		return false
	}
	return b.State() == breaker.Closed || !(hedge || q.probed || q.probeFailed)
}

// touch drops the attempts whose lease ended by now, as the pool releases
// them at the next choice.
func (m *model) touch(now time.Time) {
	kept := m.open[:0]
	for _, o := range m.open {
		if now.Before(o.lease) {
			kept = append(kept, o)
		}
	}
	m.open = kept
}

// inFlight returns the model's count of attempts in flight on member i.
func (m *model) inFlight(i int) int {
	n := 0
	for _, o := range m.open {
		if o.a.Member() == i {
			n++
		}
	}
	return n
}

// runModel drives a pool of four members through the operations that ops
// encodes (two bytes each) and checks, after each, that the pool's in-flight
// counts equal the model's and that every member chosen was admitted by the
// model's rule; at the end every attempt is settled and every count is zero.
func runModel(t *testing.T, ops []byte) {
	f := newFixture(t, []float64{1, 2, 1, 3}, func(s *pool.Settings, bs []breaker.Settings) {
		s.AttemptTimeout = time.Minute
		for i := range bs {
			bs[i].ProbeTimeout = 15 * time.Second
			bs[i].RecoveryDuration = 5 * time.Second
		}
	})
	m := &model{f: f}
	for k := 0; k+1 < len(ops); k += 2 {
		m.step(t, ops[k], ops[k+1])
		for i := range f.bs {
			if got, want := f.p.Status(f.c.Now(), i).InFlight, m.inFlight(i); got != want {
				t.Fatalf("op %d: m%d in flight = %d, model %d", k/2, i, got, want)
			}
		}
	}
	for _, o := range m.open {
		o.a.Cancel(f.c.Now())
	}
	for i := range f.bs {
		if got := f.p.Status(f.c.Now(), i).InFlight; got != 0 {
			t.Fatalf("after every outcome: m%d in flight = %d, want 0", i, got)
		}
	}
}

// step applies one operation: op selects what, arg its parameters.
func (m *model) step(t *testing.T, op, arg byte) {
	f := m.f
	now := f.c.Now()
	switch op % 6 {
	case 0: // a new request
		q := &modelRequest{serve: uint64(arg%15) + 1}
		if arg&0x80 != 0 {
			q.session = pool.SessionOf(string(rune('a' + arg%7)))
		}
		m.requests = append(m.requests, q)
	case 1, 2: // a choice (op 2: a hedge) for a request, at most 8 in flight
		if len(m.requests) == 0 || len(m.open) >= 8 {
			return
		}
		m.choose(t, m.requests[int(arg)%len(m.requests)], op == 2)
	case 3: // settle an attempt
		if len(m.open) == 0 {
			return
		}
		j := int(arg) % len(m.open)
		o := m.open[j]
		m.open = append(m.open[:j], m.open[j+1:]...)
		verdicts := []string{"ok", "fail", "timeout", "rate", "quota", "none", "cancel"}
		v := verdicts[int(arg>>3)%len(verdicts)]
		settleAs(o.a, now, v, time.Second)
		if v != "ok" && v != "none" && v != "cancel" && o.a.IsProbe() {
			o.req.probeFailed = true
		}
	case 4: // first content, or time passes
		if arg&1 == 0 && len(m.open) > 0 {
			m.open[int(arg>>1)%len(m.open)].a.FirstContent(now)
			return
		}
		f.c.Advance(time.Duration(arg) * 300 * time.Millisecond)
	case 5: // a request's pool attempt ends
		if len(m.requests) > 0 {
			q := m.requests[int(arg)%len(m.requests)]
			f.p.End(now, &q.r)
			q.probed = false
		}
	}
}

// choose asks the pool for q's next member (a hedge when hedge) and checks
// it against the model.
func (m *model) choose(t *testing.T, q *modelRequest, hedge bool) {
	f := m.f
	now := f.c.Now()
	// Release the lapsed attempts first (a choice that admits no member
	// touches the pool): their failures may re-open their breakers, which
	// the model reads.
	f.p.Choose(now, &pool.Request{}, pool.Need{CanServe: only()})
	m.touch(now)
	var want uint64
	for i := range f.bs {
		if m.admitted(q, i, hedge) {
			want |= 1 << i
		}
	}
	n := pool.Need{Session: q.session, CanServe: func(i int) bool { return q.serve&(1<<i) != 0 }}
	choose := f.p.Choose
	if hedge {
		choose = f.p.Hedge
	}
	a, err := choose(now, &q.r, n)
	if err != nil {
		if want != 0 {
			t.Fatalf("unavailable (%v), but the model admits %04b: serve %04b tried %04b probed %v failed %v hedge %v states %v %v %v %v", err, want, q.serve, q.tried, q.probed, q.probeFailed, hedge, f.bs[0].State(), f.bs[1].State(), f.bs[2].State(), f.bs[3].State())
		}
		return
	}
	if want&(1<<a.Member()) == 0 {
		t.Fatalf("chose m%d (probe %v), which the model does not admit (%04b): serve %04b tried %04b probed %v failed %v state %v would %v", a.Member(), a.IsProbe(), want, q.serve, q.tried, q.probed, q.probeFailed, f.bs[a.Member()].State(), f.bs[a.Member()].WouldAllow())
	}
	q.tried |= 1 << a.Member()
	lease := now.Add(time.Minute)
	if a.IsProbe() {
		q.probed = true
		lease = now.Add(15 * time.Second)
	}
	m.open = append(m.open, modelAttempt{a: a, req: q, lease: lease})
}

// TestPropertyModel runs random operation sequences against the model.
func TestPropertyModel(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 7))
		ops := make([]byte, 400)
		for i := range ops {
			ops[i] = byte(r.Uint32())
		}
		runModel(t, ops)
	}
}

// FuzzPoolModel is TestPropertyModel driven by the fuzzer.
func FuzzPoolModel(f *testing.F) {
	f.Add([]byte{0, 3, 1, 0, 3, 8, 1, 0, 4, 201, 1, 0})
	f.Add([]byte{0, 0x8f, 1, 0, 2, 0, 4, 250, 4, 250, 1, 0, 3, 16, 5, 0, 1, 0})
	f.Fuzz(func(t *testing.T, ops []byte) { runModel(t, ops) })
}
