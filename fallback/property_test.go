package fallback

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// held is a ticket the history holds, with its reference twin.
type held struct {
	turn Ticket
	ref  *refTicket
}

// turnPair is a turn with memory (Attempts) and its reference twin.
type turnPair struct {
	a *Attempts
	r *refTurn
}

// coverage counts what the histories reached.
type coverage struct {
	stales, cuts, quotas, hinted, timeouts, refusedProbed, routedPast, hedges int
	rateTrips, slowTrips, retriesRefused, holds                               int // rev 4
	backoffs, slowProbes                                                      int // §9.1, §9.2
}

// fataler is the part of *testing.T a history uses, so that a test can run a
// history that is expected to fail (TestPropertyCatchesRulesSwitchedOff).
type fataler interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
}

// mutate, when not nil, changes each history's Manager after New: a rule
// switched off, to show that the histories catch it.
var mutate func(*Manager)

// TestPropertyRandomHistories runs random histories of Begin, settlements
// (success, transient, rate limit, cancel, lost, settled twice), clock moves,
// SetAvailable, Reset, holds and releases, disables with an end and pure reads, and after every step checks the manager
// against refModel and the invariants of SEMANTICS section 3. Seeds are fixed;
// a failure prints the seed and the steps so far.
func TestPropertyRandomHistories(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 50
	}
	var cov coverage
	for seed := range uint64(seeds) {
		runHistory(t, seed, 400, &cov)
	}
	if cov.stales == 0 || cov.cuts == 0 || cov.quotas == 0 || cov.hinted == 0 || cov.timeouts == 0 ||
		cov.refusedProbed == 0 || cov.routedPast == 0 || cov.hedges == 0 || cov.holds == 0 ||
		cov.rateTrips == 0 || cov.slowTrips == 0 || cov.retriesRefused == 0 || cov.backoffs == 0 || cov.slowProbes == 0 {
		t.Fatalf("the histories reached too little: %+v; want some of each", cov)
	}
	t.Logf("coverage: %+v", cov)
}

func randomSettings(rng *rand.Rand) Settings {
	names := []string{"b", "c", "d"}
	s := Settings{
		Primary:                 "a",
		Chain:                   names[:rng.IntN(4)],
		TripThreshold:           rng.IntN(4), // 0 means 3
		RecoverySuccessesNeeded: rng.IntN(4),
		MaxFailCount:            rng.IntN(3),
	}
	if rng.IntN(2) == 0 {
		s.QuotaCooldown = 3 * time.Minute
	}
	if rng.IntN(2) == 0 {
		s.HedgeAfter = time.Second
		s.HedgeBudget = []float64{0, 0.5, 1}[rng.IntN(3)]
	}
	switch rng.IntN(3) {
	case 0:
		s.ProbeTimeout = 90 * time.Second // lease end + cooldown interplay
	case 1:
		s.ProbeTimeout = 10 * time.Second
	}
	randomRev4(rng, &s)
	randomBackoff(rng, &s)
	return s
}

// randomBackoff draws the settings of SEMANTICS §9.1 and §9.2: a backoff
// factor (off, 1, 2, 3.5) with its cap (default, 4 min), and in some
// histories SlowCallAfter alone (the slow probe needs no rate).
func randomBackoff(rng *rand.Rand, s *Settings) {
	s.RecoveryBackoff = []float64{0, 1, 2, 3.5}[rng.IntN(4)]
	if rng.IntN(2) == 0 {
		s.MaxRecoveryTimeout = 4 * time.Minute
		if s.RecoveryTimeout == 0 && rng.IntN(2) == 0 {
			s.MaxRecoveryTimeout = time.Minute // the cap at the base: no growth
		}
	}
	if s.SlowCallAfter == 0 && rng.IntN(3) == 0 {
		s.SlowCallAfter = time.Second
	}
}

// randomRev4 draws the settings of SEMANTICS §8: a window (failure rate,
// slow calls, or both) in two of three histories, and the retry budget.
func randomRev4(rng *rand.Rand, s *Settings) {
	if rng.IntN(3) != 0 {
		s.FailureRate = []float64{0, 0.3, 0.5, 1}[rng.IntN(4)]
		s.RateWindow = []time.Duration{0, 20 * time.Second, 2 * time.Minute}[rng.IntN(3)]
		s.RateMinCalls = []int{0, 1, 2, 4}[rng.IntN(4)]
		if rng.IntN(2) == 0 {
			s.SlowCallAfter, s.SlowCallRate = time.Second, []float64{0.25, 0.5, 1}[rng.IntN(3)]
		}
	}
	s.RetryBudget = []float64{0, -1, 0.5, 1}[rng.IntN(4)]
	s.RetryBudgetBurst = []float64{0, 1, 2.5}[rng.IntN(3)]
}

var moves = []time.Duration{
	0, time.Nanosecond, time.Second, 10 * time.Second, 59 * time.Second, time.Minute,
	61 * time.Second, 90 * time.Second, 2 * time.Minute, 5 * time.Minute, 6 * time.Minute,
}

// randomFailure draws a failure verdict and its report: kinds, hints
// (relative to now, some in the past) and timeouts.
func randomFailure(rng *rand.Rand, now, issued time.Time) (int, Failure) {
	v := []int{vTransient, vTransient, vRateLimit, vQuota}[rng.IntN(4)]
	f := Failure{Kind: map[int]Kind{vTransient: Transient, vRateLimit: RateLimit, vQuota: Quota}[v]}
	if rng.IntN(3) == 0 {
		f.Hint = now.Add([]time.Duration{-time.Second, 30 * time.Second, 90 * time.Second, 4 * time.Minute, 20 * time.Minute}[rng.IntN(5)])
	}
	f.Timeout = rng.IntN(3) == 0
	f.Elapsed = randomElapsed(rng, now, issued)
	return v, f
}

// randomElapsed is a call's reported duration: mostly the time since its
// ticket's issue, sometimes none (dated when reported) or another.
func randomElapsed(rng *rand.Rand, now, issued time.Time) time.Duration {
	switch rng.IntN(4) {
	case 0:
		return 0
	case 1:
		return time.Duration(rng.Int64N(int64(3 * time.Minute)))
	}
	return now.Sub(issued)
}

// runHistory runs one history and adds what it reached to cov.
func runHistory(t fataler, seed uint64, steps int, cov *coverage) {
	rng := rand.New(rand.NewPCG(seed, 0x10097c71))
	s := randomSettings(rng)
	var log []string
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d, settings %+v\nsteps:\n  %s\n%s", seed, s, strings.Join(log, "\n  "), fmt.Sprintf(format, args...))
	}
	clk := newClock()
	var got []Transition
	s.Now = clk.Now
	s.OnTransition = func(tr Transition) { got = append(got, tr) }
	m, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(m)
	}
	twin := sharedTwin(t, m) // NextModel through a Backend, read from m
	s.Now, s.OnTransition = nil, nil
	ref := newRef(s)
	models := append([]string{""}, s.Primary)
	models = append(models, s.Chain...)
	var tickets []held
	var turns []turnPair

	for step := range steps {
		now := clk.Now()
		switch op := rng.IntN(100); {
		case op < 15: // Begin
			predicted := m.ActiveModel()
			tk, err := m.Begin()
			rt := ref.begin(now, nil)
			ref.r4.feedTicket(nil, rt)
			log = append(log, fmt.Sprintf("%d: Begin -> %q probe=%v err=%v", step, tk.Model(), tk.IsProbe(), err != nil))
			if predicted != tk.Model() {
				fail("ActiveModel() = %q but Begin routed to %q", predicted, tk.Model())
			}
			if h, ok := checkBegin(fail, models, tk, err, rt, ref.probeAt(now)); ok {
				tickets = append(tickets, h)
			}
		case op < 30: // Next for a turn with memory (a new one, or one of up to three)
			if len(turns) == 0 || (len(turns) < 3 && rng.IntN(3) == 0) {
				turns = append(turns, turnPair{new(Attempts), &refTurn{}})
			}
			j := rng.IntN(len(turns))
			u := turns[j]
			if rng.IntN(8) == 0 { // a model the turn routes past with no ticket (§9.3 rule 6)
				past := models[1+rng.IntN(len(models)-1)] // models[0] is no model
				log = append(log, fmt.Sprintf("%d: RoutePast(turn %d, %q)", step, j, past))
				if err := u.a.RoutePast(m, past); err != nil {
					fail("RoutePast(%q): %v", past, err)
				}
				u.r.routePast(past)
			}
			if got, want := u.a.Usable(m), ref.usable(now, u.r); got != want {
				fail("turn %d: Usable() = %v, reference %v", j, got, want)
			}
			nm, nok := u.a.NextModel(m)
			if want, wok := ref.nextModel(now, u.r); nm != want || nok != wok {
				fail("turn %d: NextModel() = %q, %v; reference %q, %v", j, nm, nok, want, wok)
			}
			if tm, tok := u.a.NextModel(twin); tm != nm || tok != nok {
				fail("turn %d: NextModel() through a Backend = %q, %v; locally %q, %v", j, tm, tok, nm, nok)
			}
			routine := m.ActiveModel()
			tk, err := m.Next(u.a)
			rt := ref.next(now, u.r)
			ref.r4.feedTicket(u.r, rt)
			log = append(log, fmt.Sprintf("%d: Next(turn %d) -> %q probe=%v err=%v", step, j, tk.Model(), tk.IsProbe(), err != nil))
			if err == nil && tk.Model() != routine {
				cov.routedPast++
			}
			var e *ExhaustedError
			if errors.As(err, &e) && e.Probed {
				cov.refusedProbed++
				want := Failure{}
				if u.r.probeFail != nil {
					want = *u.r.probeFail
				}
				if e.ProbeFailure != want {
					fail("ProbeFailure = %+v, reference %+v", e.ProbeFailure, want)
				}
			}
			if h, ok := checkBegin(fail, models, tk, err, rt, ref.probeAt(now)); ok {
				tickets = append(tickets, h)
			}
			if rng.IntN(6) == 0 { // the turn ends
				turns = slices.Delete(turns, j, j+1)
			}
		case op < 33 && len(tickets) > 0 && len(turns) > 0: // a hedge of a running attempt
			h := tickets[rng.IntN(len(tickets))]
			u := turns[rng.IntN(len(turns))]
			tk, ok := m.Hedge(u.a, h.turn)
			rt := ref.hedge(now, u.r, h.turn.Model())
			ref.r4.feedTicket(u.r, rt)
			log = append(log, fmt.Sprintf("%d: Hedge(running %q) -> %q %v", step, h.turn.Model(), tk.Model(), ok))
			if ok != (rt != nil) || (ok && (tk.Model() != rt.model || tk.IsProbe())) {
				fail("Hedge = %q, %v; reference %v", tk.Model(), ok, rt)
			}
			if ok {
				cov.hedges++
				tickets = append(tickets, held{tk, rt})
			}
		case op < 60 && len(tickets) > 0: // settle a held ticket
			i := rng.IntN(len(tickets))
			h := tickets[i]
			v, f := rng.IntN(5), Failure{}
			if v == vSuccess && rng.IntN(2) == 0 { // a success that reports its first content
				d := []time.Duration{0, 500 * time.Millisecond, time.Second, 1500 * time.Millisecond}[rng.IntN(4)]
				log = append(log, fmt.Sprintf("%d: SuccessAfter(%v) %q probe=%v", step, d, h.turn.Model(), h.turn.IsProbe()))
				before := len(ref.events)
				h.turn.SuccessAfter(d)
				ref.settleAfter(h.ref, d, now)
				cov.slowTrips += b2i(len(ref.events) > before)
				cov.slowProbes += b2i(len(ref.events) > before && h.ref.probe)
				cov.backoffs += b2i(ref.cause == CauseBackoff)
				tickets = slices.Delete(tickets, i, i+1)
				break
			}
			if v == vTransient || v == vRateLimit {
				v, f = randomFailure(rng, now, h.ref.issued)
				cov.quotas += b2i(f.Kind == Quota)
				cov.hinted += b2i(!f.Hint.IsZero())
				cov.timeouts += b2i(f.Timeout)
			}
			log = append(log, fmt.Sprintf("%d: settle %q probe=%v verdict=%d %+v", step, h.turn.Model(), h.turn.IsProbe(), v, f))
			if v == vLost { // lost: never settled
				tickets = slices.Delete(tickets, i, i+1)
				break
			}
			before, fails := len(ref.events), ref.fails
			settle(h.turn, v, f)
			ref.settle(h.ref, v, f, now)
			// a trip by the window: the streak was below the threshold
			cov.rateTrips += b2i(len(ref.events) > before && f.Kind != Quota && fails+1 < ref.th && !h.ref.probe)
			if rng.IntN(10) == 0 { // settle again: must be ignored
				v2 := rng.IntN(4)
				log = append(log, fmt.Sprintf("%d: settle again verdict=%d", step, v2))
				settle(h.turn, v2, Failure{Kind: Kind(v2 - 1)})
				ref.settle(h.ref, v2, Failure{Kind: Kind(v2 - 1)}, now)
			} else {
				tickets = slices.Delete(tickets, i, i+1)
			}
		case op < 64 && len(tickets) > 0: // the oldest turn, hung since long ago, fails late (often a timeout)
			h := tickets[0]
			tickets = tickets[1:]
			f := Failure{Timeout: rng.IntN(2) == 0}
			f.Elapsed = randomElapsed(rng, now, h.ref.issued)
			log = append(log, fmt.Sprintf("%d: late failure %q probe=%v timeout=%v", step, h.turn.Model(), h.turn.IsProbe(), f.Timeout))
			settle(h.turn, vTransient, f)
			ref.settle(h.ref, vTransient, f, now)
		case op < 67 && len(tickets) > 0: // a probe bounded by its lease: cut at its end, a failure
			for i, h := range tickets {
				end, ok := h.turn.Deadline()
				if !ok {
					continue
				}
				if d := end.Sub(now); d > 0 {
					clk.Advance(d)
					now = end
				}
				tickets = slices.Delete(tickets, i, i+1)
				log = append(log, fmt.Sprintf("%d: probe cut at its lease end %v", step, end))
				settle(h.turn, vTransient, Failure{Timeout: true})
				ref.settle(h.ref, vTransient, Failure{Timeout: true}, now)
				cov.cuts++
				break
			}
		case op < 78: // clock
			d := moves[rng.IntN(len(moves))]
			if rng.IntN(4) == 0 {
				d = time.Duration(rng.Int64N(int64(7 * time.Minute)))
			}
			clk.Advance(d)
			log = append(log, fmt.Sprintf("%d: advance %v", step, d))
		case op < 86 && len(s.Chain) > 0: // SetAvailable
			i, ok := rng.IntN(len(s.Chain)), rng.IntN(3) != 0
			log = append(log, fmt.Sprintf("%d: SetAvailable(%q, %v)", step, s.Chain[i], ok))
			if err := m.SetAvailable(s.Chain[i], ok); err != nil {
				fail("SetAvailable: %v", err)
			}
			ref.setAvailable(i, ok, now)
		case op < 88: // Reset
			log = append(log, fmt.Sprintf("%d: Reset", step))
			m.Reset()
			ref.reset(now)
		case op < 91 && len(tickets) > 0: // a same-model retry asks the budget
			h := tickets[rng.IntN(len(tickets))]
			got, want := h.turn.Retry(), ref.r4.retry(h.ref.model)
			if rng.IntN(3) == 0 {
				got, want = m.Retry(h.ref.model), ref.r4.retry(h.ref.model)
			}
			log = append(log, fmt.Sprintf("%d: Retry(%q) -> %v", step, h.ref.model, got))
			if got != want {
				fail("Retry(%q) = %v, reference %v", h.ref.model, got, want)
			}
			cov.retriesRefused += b2i(!got)
		case op < 93: // rev 4: an operator's hold, until a time that may have passed
			until := now.Add(moves[rng.IntN(len(moves))] - time.Duration(rng.IntN(2))*time.Minute)
			why := fmt.Sprint("INC-", step)
			log = append(log, fmt.Sprintf("%d: Hold(%v, %q)", step, until, why))
			m.Hold(until, why)
			ref.hold(until, why, now)
			cov.holds++
		case op < 94: // rev 4: Release
			log = append(log, fmt.Sprintf("%d: Release", step))
			m.Release()
			ref.release(now)
		case op < 96 && len(s.Chain) > 0: // rev 4: a disable with an end (or none)
			i, until := rng.IntN(len(s.Chain)), time.Time{}
			if rng.IntN(4) != 0 {
				until = now.Add(moves[rng.IntN(len(moves))])
			}
			log = append(log, fmt.Sprintf("%d: Disable(%q, %v)", step, s.Chain[i], until))
			if err := m.Disable(s.Chain[i], until, "why"); err != nil {
				fail("Disable: %v", err)
			}
			ref.disable(i, true, until, "why", now)
		default: // pure reads change nothing
			log = append(log, fmt.Sprintf("%d: pure reads", step))
			before := m.Snapshot()
			_, _, _ = m.State(), m.ActiveModel(), m.FallbackActivated()
			_ = m.Snapshot()
			if after := m.Snapshot(); !reflect.DeepEqual(before, after) {
				fail("pure reads changed the manager:\n%+v\n%+v", before, after)
			}
		}
		if ref.unsound != "" {
			fail("the reference's coarse order is unsound: %s", ref.unsound)
		}
		check(fail, m, ref, clk.Now(), &got)
		check4(fail, m, ref, clk.Now())
	}
	cov.stales += ref.stales
}

// checkBegin compares a Begin or Next with the reference's ticket rt and
// returns the pair to hold.
func checkBegin(fail func(string, ...any), models []string, tk Ticket, err error, rt *refTicket, probeAt time.Time) (held, bool) {
	if !slices.Contains(models, tk.Model()) {
		fail("routed to %q", tk.Model())
	}
	if rt.exhausts {
		var e *ExhaustedError
		if !errors.As(err, &e) || !errors.Is(err, ErrExhausted) {
			fail("Begin = %q, %v; reference: ErrExhausted", tk.Model(), err)
		}
		if !e.ProbeAt.Equal(probeAt) {
			fail("ExhaustedError.ProbeAt = %v, reference %v", e.ProbeAt, probeAt)
		}
		return held{}, false
	}
	if err != nil || tk.Model() != rt.model || tk.IsProbe() != rt.probe {
		fail("Begin = %q probe=%v err=%v; reference %q probe=%v", tk.Model(), tk.IsProbe(), err, rt.model, rt.probe)
	}
	if end, ok := tk.Deadline(); ok != rt.probe || !end.Equal(rt.end) {
		fail("Deadline() = %v, %v; reference lease end %v", end, ok, rt.end)
	}
	return held{tk, rt}, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func settle(t Ticket, v int, f Failure) {
	switch v {
	case vSuccess:
		t.Success()
	case vTransient, vRateLimit, vQuota:
		if f == (Failure{}) && v == vRateLimit {
			t.Failure(RateLimit) // the rev-2 form
			return
		}
		t.Fail(f)
	case vCancel:
		t.Cancel()
	}
}

// check compares the manager with the reference after a step.
func check(fail func(string, ...any), m *Manager, ref *refModel, now time.Time, got *[]Transition) {
	if !reflect.DeepEqual(*got, ref.events) && (len(*got) > 0 || len(ref.events) > 0) {
		fail("transitions:\n got %v\nwant %v", *got, ref.events)
	}
	*got, ref.events = nil, nil
	snap, want := m.Snapshot(), ref.snapshot(now)
	if !equalSnap(snap, want) {
		fail("Snapshot:\n got %+v\nwant %+v", snap, want)
	}
	if st := m.State(); st != want.State {
		fail("State() = %v, Snapshot().State = %v", st, want.State)
	}
	if m.FallbackActivated() != want.FallbackActivated {
		fail("FallbackActivated() = %v", m.FallbackActivated())
	}
	if a, w := m.ActiveModel(), ref.peek(now); a != w {
		fail("ActiveModel() = %q, reference %q", a, w)
	}
	// At most one probe in flight, only while Recovering.
	if !snap.ProbeStartedAt.IsZero() && snap.State != Recovering {
		fail("a probe in flight in state %v", snap.State)
	}
}

// FuzzHistory explores more random histories than the fixed seeds: the fuzzer
// picks the seed and the length. Run with go test -fuzz FuzzHistory ./fallback/.
func FuzzHistory(f *testing.F) {
	for _, seed := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(seed, uint16(300))
	}
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16) {
		runHistory(t, seed, int(steps%1000), &coverage{})
	})
}
