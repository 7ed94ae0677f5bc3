package fallback

import "time"

// ref4 is the reference's part of SEMANTICS §8 (rev 4), written plainly: the
// window is the list of verdicts with their arrival times, counted by the
// number of the RateWindow/10 slice each fell in (the last ten slices up to
// now's); the budgets are one float per model.
type ref4 struct {
	epoch     time.Time
	rate      float64 // FailureRate
	slowRate  float64 // SlowCallRate (0 unless SlowCallAfter is set too)
	slowAfter time.Duration
	minCalls  int
	width     time.Duration // RateWindow / 10
	verdicts  []refVerdict
	pending   bool // the success being settled came late (SuccessAfter)

	feed, burst float64
	tokens      map[string]float64
}

type refVerdict struct {
	at time.Time
	o  int // refOK, refFailed, refSlow
}

const (
	refOK = iota
	refFailed
	refSlow
)

func newRef4(s Settings) ref4 {
	r := ref4{epoch: t0, rate: s.FailureRate, minCalls: s.RateMinCalls, feed: s.RetryBudget, burst: s.RetryBudgetBurst,
		tokens: map[string]float64{}}
	if s.SlowCallAfter > 0 && s.SlowCallRate > 0 {
		r.slowRate, r.slowAfter = s.SlowCallRate, s.SlowCallAfter
	}
	if r.minCalls == 0 {
		r.minCalls = 20
	}
	span := s.RateWindow
	if span == 0 {
		span = 30 * time.Second
	}
	r.width = span / 10
	if r.feed == 0 {
		r.feed = 0.2
	}
	if r.burst == 0 {
		r.burst = 10
	}
	for _, m := range append([]string{s.Primary}, s.Chain...) {
		r.tokens[m] = r.burst
	}
	return r
}

func (r *ref4) on() bool { return r.rate > 0 || r.slowRate > 0 }

func (r *ref4) clear() { r.verdicts = nil }

// takeSlow returns the verdict of the success being settled.
func (r *ref4) takeSlow() int {
	if r.pending {
		return refSlow
	}
	return refOK
}

// slice is the number of the window slice that holds t.
func (r *ref4) slice(t time.Time) int64 {
	d := t.Sub(r.epoch)
	n := int64(d / r.width)
	if d < 0 && d%r.width != 0 {
		n--
	}
	return n
}

// counts returns the verdicts, failures and slow successes in the window at now.
func (r *ref4) counts(now time.Time) (v, f, slow int) {
	n := r.slice(now)
	for _, x := range r.verdicts {
		if r.slice(x.at) > n-10 {
			v++
			f += b2i(x.o == refFailed)
			slow += b2i(x.o == refSlow)
		}
	}
	return v, f, slow
}

// record adds a verdict of the primary's own turn in Primary and reports
// whether the window trips on it.
func (r *ref4) record(now time.Time, o int) bool {
	if !r.on() {
		return false
	}
	r.verdicts = append(r.verdicts, refVerdict{now, o})
	v, f, slow := r.counts(now)
	if v < r.minCalls {
		return false
	}
	switch o {
	case refFailed:
		return r.rate > 0 && float64(f)/float64(v) >= r.rate
	case refSlow:
		return r.slowRate > 0 && float64(slow)/float64(v) >= r.slowRate
	}
	return false
}

// feedTicket feeds the budget of the model of ticket t for its turn u (nil:
// a turn of one attempt), once per turn and model.
func (r *ref4) feedTicket(u *refTurn, t *refTicket) {
	if t == nil || t.exhausts {
		return
	}
	if u != nil {
		if u.fed[t.model] {
			return
		}
		if u.fed == nil {
			u.fed = map[string]bool{}
		}
		u.fed[t.model] = true
	}
	if r.feed > 0 {
		r.tokens[t.model] = min(r.burst, r.tokens[t.model]+r.feed)
	}
}

// retry spends a token of model's budget.
func (r *ref4) retry(model string) bool {
	if r.feed < 0 {
		return true
	}
	if r.tokens[model] < 1 {
		return false
	}
	r.tokens[model]--
	return true
}

// settleAfter is Turn.SuccessAfter(d) of t.
func (r *refModel) settleAfter(t *refTicket, d time.Duration, now time.Time) {
	if t.probe && r.r5.probeSlow > 0 && d > r.r5.probeSlow {
		r.settle(t, vSlowProbe, Failure{}, now)
		return
	}
	r.r4.pending = r.r4.slowAfter > 0 && d > r.r4.slowAfter && t.entry < 0 && !t.probe
	r.settle(t, vSuccess, Failure{}, now)
	r.r4.pending = false
}

// check4 compares the manager's window and budgets (the retry budgets and
// the hedge bucket) with the reference's.
func check4(fail func(string, ...any), m *Manager, ref *refModel, now time.Time) {
	if got := m.hedges.Tokens(); got != ref.bucket {
		fail("hedge bucket: %v tokens, reference %v", got, ref.bucket)
	}
	if win := m.win.Load(); win != nil {
		c := win.Counts(int64(now.Sub(t0)))
		v, f, slow := ref.r4.counts(now)
		if c.Verdicts != int64(v) || c.Failures != int64(f) || c.Slow != int64(slow) {
			fail("window %+v, reference %d verdicts, %d failures, %d slow", c, v, f, slow)
		}
	}
	for i, model := range append([]string{m.cfg.primary}, m.cfg.models...) {
		if got, want := m.budgets[i].Tokens(), ref.r4.tokens[model]; ref.r4.feed >= 0 && got != want {
			fail("retry budget of %q: %v tokens, reference %v", model, got, want)
		}
	}
}
