package pool_test

import (
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/pool"
)

// headroomModel is a reference model of rule 5 for one member: every
// attempt started, and for each figure R, the answer whose request started
// latest among those that carried it (with a reset after its arrival).
type headroomModel struct {
	starts   []int64 // each attempt's estimated tokens, by start order
	reqR     *modelFigure
	tokR     *modelFigure
	attempts []pool.Attempt
}

type modelFigure struct {
	seq       int // R's start order
	remaining int64
	reset     time.Time
	arrived   time.Time
}

// note records an answer of attempt seq that carried figure l at now.
func (m *headroomModel) note(fp **modelFigure, seq int, l pool.Limit, now time.Time) {
	if l.Reset.IsZero() || *fp != nil && seq < (*fp).seq {
		return
	}
	if !l.Reset.After(now) {
		*fp = nil
		return
	}
	*fp = &modelFigure{seq: seq, remaining: l.Remaining, reset: l.Reset, arrived: now}
}

// admits is rule 5 for a request needing need tokens at now.
func (m *headroomModel) admits(now time.Time, need int64) bool {
	if f := m.reqR; f != nil && now.Before(f.reset) && f.remaining-int64(len(m.starts)-f.seq-1) <= 0 {
		return false
	}
	if f := m.tokR; f != nil {
		until := f.reset
		if a := f.arrived.Add(time.Second); a.Before(until) {
			until = a
		}
		var after int64
		for _, tk := range m.starts[f.seq+1:] {
			after += tk
		}
		if now.Before(until) && f.remaining-after < need {
			return false
		}
	}
	return true
}

// FuzzHeadroom drives one member's starts and answers (with arbitrary
// figures, in any order of arrival) and checks admission against the model.
func FuzzHeadroom(f *testing.F) {
	f.Add([]byte{0, 5, 0, 1, 0, 2, 1, 0, 3, 9, 1, 1, 0, 0, 2, 200})
	f.Add([]byte{0, 1, 1, 0, 250, 4, 1, 0, 7, 7, 0, 3, 2, 40})
	f.Fuzz(func(t *testing.T, ops []byte) {
		fx := newFixture(t, equal(2), nil)
		m := &headroomModel{}
		for k := 0; k+3 < len(ops); k += 4 {
			now := fx.c.Now()
			op, a, b, c := ops[k]%3, ops[k+1], ops[k+2], ops[k+3]
			switch op {
			case 0: // an attempt starts, estimating a×10 tokens
				var r pool.Request
				at, err := fx.p.Pin(now, &r, 0, pool.Need{Tokens: int64(a) * 10})
				if err != nil {
					t.Fatal(err)
				}
				m.starts = append(m.starts, int64(a)*10)
				m.attempts = append(m.attempts, at)
			case 1: // an answer of attempt a arrives with figures b (requests) and c (tokens)
				if len(m.attempts) == 0 {
					continue
				}
				seq := int(a) % len(m.attempts)
				h := pool.Headroom{
					Requests: pool.Limit{Remaining: int64(b%8) - 1, Reset: now.Add(time.Duration(b>>3) * 500 * time.Millisecond)},
					Tokens:   pool.Limit{Remaining: int64(c) * 20, Reset: now.Add(time.Duration(c%16) * 300 * time.Millisecond)},
				}
				if b&1 == 1 {
					h.Requests.Reset = time.Time{} // a remaining figure without its reset
				}
				m.attempts[seq].Headroom(now, h)
				m.note(&m.reqR, seq, h.Requests, now)
				m.note(&m.tokR, seq, h.Tokens, now)
			case 2: // time passes
				fx.c.Advance(time.Duration(a) * 10 * time.Millisecond)
			}
			need := int64(b) * 5
			if got, want := fx.p.Admits(fx.c.Now(), &pool.Request{}, pool.Need{Tokens: need, CanServe: only(0)}), m.admits(fx.c.Now(), need); got != want {
				t.Fatalf("op %d: admitted = %v, model %v", k/4, got, want)
			}
		}
	})
}
