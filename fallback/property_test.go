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
	turn Turn
	ref  *refTicket
}

// TestPropertyRandomHistories runs random histories of Begin, settlements
// (success, transient, rate limit, cancel, lost, settled twice), clock moves,
// SetAvailable, Reset and pure reads, and after every step checks the manager
// against refModel and the invariants of SEMANTICS section 3. Seeds are fixed;
// a failure prints the seed and the steps so far.
func TestPropertyRandomHistories(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 50
	}
	var stales, cuts int
	for seed := range uint64(seeds) {
		s, c := runHistory(t, seed, 400)
		stales, cuts = stales+s, cuts+c
	}
	if stales == 0 || cuts == 0 {
		t.Fatalf("the histories reached %d stale failures and %d probes cut at their lease; want some of each", stales, cuts)
	}
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
	switch rng.IntN(3) {
	case 0:
		s.ProbeTimeout = 90 * time.Second // lease end + cooldown interplay
	case 1:
		s.ProbeTimeout = 10 * time.Second
	}
	return s
}

var moves = []time.Duration{
	0, time.Nanosecond, time.Second, 10 * time.Second, 59 * time.Second, time.Minute,
	61 * time.Second, 90 * time.Second, 2 * time.Minute, 5 * time.Minute, 6 * time.Minute,
}

// runHistory runs one history and returns how many stale failures and probes
// cut at their lease it reached.
func runHistory(t *testing.T, seed uint64, steps int) (stales, cuts int) {
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
	s.Now, s.OnTransition = nil, nil
	ref := newRef(s)
	models := append([]string{""}, s.Primary)
	models = append(models, s.Chain...)
	var tickets []held

	for step := range steps {
		now := clk.Now()
		switch op := rng.IntN(100); {
		case op < 30: // Begin
			predicted := m.ActiveModel()
			tk, err := m.Begin()
			rt := ref.begin(now)
			log = append(log, fmt.Sprintf("%d: Begin -> %q probe=%v err=%v", step, tk.Model(), tk.IsProbe(), err != nil))
			if predicted != tk.Model() {
				fail("ActiveModel() = %q but Begin routed to %q", predicted, tk.Model())
			}
			if !slices.Contains(models, tk.Model()) {
				fail("routed to %q", tk.Model())
			}
			if rt.exhausts {
				if !errors.Is(err, ErrExhausted) {
					fail("Begin = %q, %v; reference: ErrExhausted", tk.Model(), err)
				}
				break
			}
			if err != nil || tk.Model() != rt.model || tk.IsProbe() != rt.probe {
				fail("Begin = %q probe=%v err=%v; reference %q probe=%v", tk.Model(), tk.IsProbe(), err, rt.model, rt.probe)
			}
			if end, ok := tk.Deadline(); ok != rt.probe || !end.Equal(rt.end) {
				fail("Deadline() = %v, %v; reference lease end %v", end, ok, rt.end)
			}
			tickets = append(tickets, held{tk, rt})
		case op < 60 && len(tickets) > 0: // settle a held ticket
			i := rng.IntN(len(tickets))
			h := tickets[i]
			v := rng.IntN(5)
			log = append(log, fmt.Sprintf("%d: settle %q probe=%v verdict=%d", step, h.turn.Model(), h.turn.IsProbe(), v))
			if v == 4 { // lost: never settled
				tickets = slices.Delete(tickets, i, i+1)
				break
			}
			settle(h.turn, v)
			ref.settle(h.ref, v, now)
			if rng.IntN(10) == 0 { // settle again: must be ignored
				v2 := rng.IntN(4)
				log = append(log, fmt.Sprintf("%d: settle again verdict=%d", step, v2))
				settle(h.turn, v2)
				ref.settle(h.ref, v2, now)
			} else {
				tickets = slices.Delete(tickets, i, i+1)
			}
		case op < 64 && len(tickets) > 0: // the oldest turn, hung since long ago, fails late
			h := tickets[0]
			tickets = tickets[1:]
			log = append(log, fmt.Sprintf("%d: late failure %q probe=%v", step, h.turn.Model(), h.turn.IsProbe()))
			settle(h.turn, vTransient)
			ref.settle(h.ref, vTransient, now)
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
				settle(h.turn, vTransient)
				ref.settle(h.ref, vTransient, now)
				cuts++
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
	}
	return ref.stales, cuts
}

func settle(t Turn, v int) {
	switch v {
	case vSuccess:
		t.Success()
	case vTransient:
		t.Failure(Transient)
	case vRateLimit:
		t.Failure(RateLimit)
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
		runHistory(t, seed, int(steps%1000))
	})
}
