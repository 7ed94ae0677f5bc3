package pool_test

import (
	"math"
	"testing"
	"time"

	"github.com/loopctl/loopctl-go/breaker"
	"github.com/loopctl/loopctl-go/pool"
)

// at returns t0 + d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// TestEstimateTable has one case per clause of the latency estimates
// (docs/SEMANTICS.md §9.3 rule 4), read through member m0's Status at the
// row's end.
func TestEstimateTable(t *testing.T) {
	ms := time.Millisecond
	type row struct {
		name          string
		penalty       time.Duration
		run           func(p *pool.Pool)
		read          time.Duration // when Status is read
		stream, whole time.Duration
	}
	// serve runs one attempt on m0 chosen at start, first content at first,
	// settled by how at end.
	serve := func(p *pool.Pool, stream bool, start, first, end time.Duration, how string) {
		var r pool.Request
		a, err := p.Choose(at(start), &r, pool.Need{CanServe: only(0), Stream: stream})
		if err != nil {
			panic(err)
		}
		if first > 0 {
			a.FirstContent(at(first))
		}
		settleAs(a, at(end), how, end-start)
	}
	moved := func(from, to, dt time.Duration) time.Duration {
		return from + time.Duration(float64(to-from)*(1-math.Exp(-float64(dt)/float64(10*time.Second))))
	}
	rows := []row{
		{name: "a success's time to first content sets an estimate that had none",
			run:  func(p *pool.Pool) { serve(p, true, 0, 100*ms, 900*ms, "ok") },
			read: time.Second, stream: 100 * ms},
		{name: "a whole answer's first content is the answer",
			run:  func(p *pool.Pool) { serve(p, false, 0, 0, 250*ms, "ok") },
			read: time.Second, whole: 250 * ms},
		{name: "a later sample moves it by weight 1 − e^(−Δt/τ), Δt since the last sample",
			run: func(p *pool.Pool) {
				serve(p, true, 0, 100*ms, 100*ms, "ok")
				serve(p, true, 5*time.Second, 5*time.Second+300*ms, 6*time.Second, "ok")
			},
			read: 6 * time.Second, stream: moved(100*ms, 300*ms, 5900*ms)}, // sampled when settled,
		{name: "one slow answer among fast ones moves it a little, downward too",
			run: func(p *pool.Pool) {
				serve(p, true, 0, 65*ms, 65*ms, "ok")
				serve(p, true, 165*ms, 187*ms, 200*ms, "ok")
			},
			read: time.Second, stream: moved(65*ms, 22*ms, 135*ms)},
		{name: "no sample for τ: the estimate is forgotten",
			run:  func(p *pool.Pool) { serve(p, true, 0, 100*ms, 100*ms, "ok") },
			read: 10*time.Second + 100*ms},
		{name: "after τ the next sample sets it",
			run: func(p *pool.Pool) {
				serve(p, true, 0, 100*ms, 100*ms, "ok")
				serve(p, true, 20*time.Second, 20*time.Second+40*ms, 21*time.Second, "ok")
			},
			read: 21 * time.Second, stream: 40 * ms},
		{name: "a failure's Penalty above the estimate replaces it at once, in both estimates",
			run: func(p *pool.Pool) {
				serve(p, true, 0, 100*ms, 100*ms, "ok")
				serve(p, true, 200*ms, 0, 300*ms, "fail")
			},
			read: time.Second, stream: 30 * time.Second, whole: 30 * time.Second},
		{name: "a rate limit, a quota and a timeout are failures with a verdict: Penalty",
			run:  func(p *pool.Pool) { serve(p, false, 0, 0, 10*ms, "rate") },
			read: time.Second, stream: 30 * time.Second, whole: 30 * time.Second},
		{name: "a Penalty below the estimate is an ordinary sample", penalty: 50 * ms,
			run: func(p *pool.Pool) {
				serve(p, false, 0, 0, 400*ms, "ok")
				serve(p, false, time.Second, 0, 2400*ms, "fail")
			},
			read: 3 * time.Second, stream: 50 * ms, whole: moved(400*ms, 50*ms, 2*time.Second)},
		{name: "a cancel gives no sample",
			run: func(p *pool.Pool) {
				serve(p, true, 0, 100*ms, 100*ms, "ok")
				serve(p, true, time.Second, 0, 2*time.Second, "cancel")
			},
			read: 3 * time.Second, stream: 100 * ms},
		{name: "an answer with no verdict gives none",
			run: func(p *pool.Pool) {
				serve(p, true, 0, 100*ms, 100*ms, "ok")
				serve(p, true, time.Second, 0, 2*time.Second, "none")
			},
			read: 3 * time.Second, stream: 100 * ms},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			f := newFixture(t, equal(2), func(s *pool.Settings, _ []breaker.Settings) { s.Penalty = row.penalty })
			row.run(f.p)
			st := f.p.Status(at(row.read), 0)
			if d := st.Stream - row.stream; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("stream estimate = %v, want %v", st.Stream, row.stream)
			}
			if d := st.Whole - row.whole; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("whole estimate = %v, want %v", st.Whole, row.whole)
			}
		})
	}
}
